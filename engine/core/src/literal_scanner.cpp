#include "literal_scanner.h"

#include <algorithm>
#include <limits>

namespace triage::core::detail {

namespace {

unsigned char Lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }
unsigned char Upper(unsigned char c) { return (c >= 'a' && c <= 'z') ? c - 32 : c; }

// A rough frequency of a byte in service logs, used only to choose which window of a long
// literal to index: windows made of rarer pairs stop the scan less often.
int Commonness(unsigned char c) {
  if (c == ' ') return 12;
  if (c >= 'a' && c <= 'z') return (c == 'e' || c == 't' || c == 'a' || c == 'o' || c == 'i' ||
                                    c == 'n' || c == 's' || c == 'r')
                                       ? 9
                                       : 6;
  if (c >= '0' && c <= '9') return 7;
  if (c == '.' || c == ',' || c == ':' || c == '_' || c == '-' || c == '=' || c == '[' ||
      c == ']' || c == '(' || c == ')')
    return 5;
  if (c >= 'A' && c <= 'Z') return 3;
  return 2;
}

// Every case variant of a byte pair, as table keys.
template <typename F>
void ForEachCaseKey(unsigned char a, unsigned char b, F&& f) {
  const unsigned char as[2] = {Lower(a), Upper(a)};
  const unsigned char bs[2] = {Lower(b), Upper(b)};
  for (int x = 0; x < (as[0] == as[1] ? 1 : 2); ++x)
    for (int y = 0; y < (bs[0] == bs[1] ? 1 : 2); ++y) f(unsigned(as[x]) | (unsigned(bs[y]) << 8));
}

}  // namespace

LiteralScanner::LiteralScanner(const std::vector<std::string>& literals) {
  for (const auto& l : literals) {
    std::string low(l);
    for (auto& c : low) c = char(Lower(static_cast<unsigned char>(c)));
    literals_.push_back(std::move(low));
  }
  // Two groups: long literals get an 8-byte window (jumps of up to 7 bytes), short ones a
  // 4-byte window, so that one short literal does not slow the scan for all the others.
  for (size_t width : {size_t(8), size_t(4)}) {
    Group g;
    g.width = width;
    std::vector<std::pair<unsigned, Entry>> keyed;
    for (uint32_t li = 0; li < literals_.size(); ++li) {
      const std::string& lit = literals_[li];
      if (lit.size() < kMinLiteral) continue;
      const bool mine = width == 8 ? lit.size() >= 8 : lit.size() < 8;
      if (!mine) continue;
      // The window of the literal whose pairs are rarest.
      size_t best = 0;
      int best_cost = std::numeric_limits<int>::max();
      for (size_t off = 0; off + width <= lit.size(); ++off) {
        int cost = 0;
        for (size_t q = 0; q + 1 < width; ++q)
          cost += Commonness(lit[off + q]) * Commonness(lit[off + q + 1]);
        if (cost < best_cost) best_cost = cost, best = off;
      }
      keyed.push_back({0, Entry{li, uint32_t(best)}});
    }
    if (keyed.empty()) continue;
    g.shift.assign(65536, uint8_t(width - 1));
    std::vector<std::pair<unsigned, Entry>> bucketed;
    for (const auto& [unused, e] : keyed) {
      (void)unused;
      const auto* win = reinterpret_cast<const unsigned char*>(literals_[e.literal].data()) + e.offset;
      for (size_t q = 0; q + 1 < width; ++q) {
        const uint8_t s = uint8_t(width - 2 - q);
        ForEachCaseKey(win[q], win[q + 1], [&](unsigned key) {
          g.shift[key] = std::min(g.shift[key], s);
        });
      }
      ForEachCaseKey(win[width - 2], win[width - 1],
                     [&](unsigned key) { bucketed.push_back({key, e}); });
    }
    std::sort(bucketed.begin(), bucketed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    g.start.assign(65537, 0);
    for (const auto& [key, e] : bucketed) g.start[key + 1]++;
    for (size_t k = 1; k < g.start.size(); ++k) g.start[k] += g.start[k - 1];
    for (const auto& [key, e] : bucketed) g.entries.push_back(e);
    groups_.push_back(std::move(g));
  }
}

bool LiteralScanner::Verify(const Entry& e, std::string_view text, size_t window_start) const {
  const std::string& lit = literals_[e.literal];
  if (window_start < e.offset) return false;
  const size_t begin = window_start - e.offset;
  if (begin + lit.size() > text.size()) return false;
  const auto* t = reinterpret_cast<const unsigned char*>(text.data()) + begin;
  for (size_t k = 0; k < lit.size(); ++k)
    if (Lower(t[k]) != static_cast<unsigned char>(lit[k])) return false;
  return true;
}

bool LiteralScanner::Any(std::string_view text) const {
  for (const auto& g : groups_) {
    const size_t n = text.size();
    const size_t w = g.width;
    if (n < w) continue;
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
      for (uint32_t k = g.start[key]; k < g.start[key + 1]; ++k)
        if (Verify(g.entries[k], text, i + 1 - w)) return true;
      ++i;
    }
  }
  return false;
}

}  // namespace triage::core::detail
