// A multi-literal scanner for the matcher's prefilter (internal to triage::core).
//
// Wu-Manber: a shift table indexed by the last bytes of a window tells how far the scan may
// jump; only where the shift is zero are the candidate literals compared. Most noise text is
// skipped several bytes at a time. Literals are grouped by length (windows of 8, 6 and 4
// bytes) so that a few short literals do not slow the scan for all the long ones. Comparison
// ignores ASCII case, so a literal derived from a `(?i)` pattern still works. Immutable after
// construction; const members are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace triage::core::detail {

class LiteralScanner {
 public:
  // Every literal must be at least kMinLiteral bytes long; shorter ones are ignored.
  static constexpr size_t kMinLiteral = 4;

  LiteralScanner() = default;
  // Literals in any ASCII case; or, where `keep_case[i]` is set (when given, one per literal),
  // literal i byte for byte.
  explicit LiteralScanner(const std::vector<std::string>& literals,
                          const std::vector<uint8_t>& keep_case = {});
  explicit LiteralScanner(const std::vector<std::string_view>& literals,
                          const std::vector<uint8_t>& keep_case = {});

  bool empty() const { return groups_.empty(); }

  // True when any literal occurs in `text`.
  bool Any(std::string_view text) const;

  // Calls on_hit(literal index) for every literal occurrence (a literal may be reported more
  // than once).
  template <typename OnHit>
  void ForEach(std::string_view text, OnHit&& on_hit) const {
    auto all = [&](size_t lit) {
      on_hit(lit);
      return false;  // go on
    };
    ScanAll(text, all);
  }

 private:
  struct Entry {
    uint32_t literal;  // literal index
    uint32_t offset;   // where the window starts inside the literal
    // The window's bytes as a number (the first 8, or 4 in the short group), with `fold` ORed
    // in: a text window that differs from it after the same OR cannot hold the literal, so most
    // candidates of a busy bucket are passed over without comparing the literal. `fold` sets
    // bit 5 of each byte for a literal found in any case (a letter's two cases agree there),
    // and is 0 for one that keeps its case.
    uint64_t window;
    uint64_t fold;
  };
  struct Group {
    size_t width = 0;               // window length
    bool triple = false;            // keyed by hashed byte triples, else by byte pairs
    std::vector<uint8_t> shift;     // 65536 entries, by the key of the bytes ending a window
    std::vector<uint32_t> start;    // 65537 bucket starts into entries
    std::vector<Entry> entries;
  };

  void Build(const std::vector<std::string_view>& literals, const std::vector<uint8_t>& keep_case);
  std::string_view Literal(size_t i) const {
    return std::string_view(bytes_.data() + begin_[i], begin_[i + 1] - begin_[i]);
  }
  bool Verify(const Entry& e, std::string_view text, size_t window_start) const;

  // The table key of the bytes ending at p[i]: three bytes hashed (case folded) for the long
  // group, where hundreds of windows would fill a pair table; the pair itself, unfolded (every
  // case variant is in the table), for the short groups.
  static unsigned Key3(const unsigned char* p, size_t i) {
    // OR 0x20 folds ASCII letters to lower case (and a few punctuation bytes onto others,
    // which only costs an extra comparison now and then: Verify compares exactly).
    const uint32_t x = (uint32_t(p[i - 2]) | (uint32_t(p[i - 1]) << 8) | (uint32_t(p[i]) << 16)) |
                       0x202020u;
    return (x * 0x9E3779B1u) >> 16;
  }
  // The `width` (8 or 4) bytes at p as a number, in memory order.
  static uint64_t Window(const unsigned char* p, size_t width) {
    if (width == 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static unsigned Key2(const unsigned char* p, size_t i) {
    return unsigned(p[i - 1]) | (unsigned(p[i]) << 8);
  }

  template <bool kTriple, typename OnHit>
  bool ScanGroup(const Group& g, std::string_view text, OnHit& on_hit) const {
    const size_t n = text.size();
    const size_t w = g.width;
    if (n < w) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const uint8_t* shift = g.shift.data();
    size_t i = w - 1;
    while (i < n) {
      const unsigned key = kTriple ? Key3(p, i) : Key2(p, i);
      const uint8_t s = shift[key];
      if (s) {
        i += s;
        continue;
      }
      const uint64_t at = Window(p + i + 1 - w, w);
      for (uint32_t k = g.start[key]; k < g.start[key + 1]; ++k) {
        const Entry& e = g.entries[k];
        if ((at | e.fold) != e.window) continue;
        if (Verify(e, text, i + 1 - w) && on_hit(size_t(e.literal))) return true;
      }
      ++i;
    }
    return false;
  }

  template <typename OnHit>
  bool ScanAll(std::string_view text, OnHit& on_hit) const {
    for (const auto& g : groups_) {
      if (g.triple ? ScanGroup<true>(g, text, on_hit) : ScanGroup<false>(g, text, on_hit))
        return true;
    }
    return false;
  }

  static const unsigned char kFold[256];

  // The literals end to end (lower-case, but for those that keep their case), literal i at
  // begin_[i] .. begin_[i + 1]: one allocation for tens of thousands of them.
  std::string bytes_;
  std::vector<uint32_t> begin_;
  std::vector<uint8_t> keep_case_;  // by literal
  std::vector<Group> groups_;
};

}  // namespace triage::core::detail
