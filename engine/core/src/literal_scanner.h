// A multi-literal scanner for the matcher's prefilter (internal to triage::core).
//
// Wu-Manber over byte pairs: a shift table indexed by the last two bytes of a window tells how
// far the scan may jump; only where the shift is zero are the candidate literals compared. Most
// noise text is skipped several bytes at a time. Comparison ignores ASCII case (the literals are
// stored lower-case and the tables hold every case variant of a pair), so a literal derived from
// a `(?i)` pattern still works. Immutable after construction; const members are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace triage::core::detail {

class LiteralScanner {
 public:
  // Every literal must be at least kMinLiteral bytes long; shorter ones are ignored.
  static constexpr size_t kMinLiteral = 4;

  LiteralScanner() = default;
  explicit LiteralScanner(const std::vector<std::string>& literals);

  bool empty() const { return groups_.empty(); }

  // True when any literal occurs in `text`.
  bool Any(std::string_view text) const;

  // Calls on_hit(literal index) for every literal occurrence (a literal may be reported more
  // than once).
  template <typename OnHit>
  void ForEach(std::string_view text, OnHit&& on_hit) const {
    for (const auto& g : groups_) ScanGroup(g, text, on_hit);
  }

 private:
  struct Entry {
    uint32_t literal;  // index into literals_
    uint32_t offset;   // where the window starts inside the literal
  };
  struct Group {
    size_t width = 0;               // window length
    std::vector<uint8_t> shift;     // 65536 entries, by the two bytes ending a window
    std::vector<uint32_t> start;    // 65537 bucket starts into entries
    std::vector<Entry> entries;
  };

  bool Verify(const Entry& e, std::string_view text, size_t window_start) const;

  template <typename OnHit>
  void ScanGroup(const Group& g, std::string_view text, OnHit& on_hit) const {
    const size_t n = text.size();
    const size_t w = g.width;
    if (n < w) return;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const uint8_t* shift = g.shift.data();
    size_t i = w - 1;
    while (i < n) {
      const unsigned key = unsigned(p[i - 1]) | (unsigned(p[i]) << 8);
      const uint8_t s = shift[key];
      if (s) {
        i += s;
        continue;
      }
      for (uint32_t k = g.start[key]; k < g.start[key + 1]; ++k) {
        const Entry& e = g.entries[k];
        if (Verify(e, text, i + 1 - w)) on_hit(size_t(e.literal));
      }
      ++i;
    }
  }

  std::vector<std::string> literals_;  // lower-case
  std::vector<Group> groups_;
};

}  // namespace triage::core::detail
