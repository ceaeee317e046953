#include "literal_scanner.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace triage::core::detail {

namespace {

unsigned char Lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }
unsigned char Upper(unsigned char c) { return (c >= 'a' && c <= 'z') ? c - 32 : c; }

// How often each byte occurs in service logs, in parts per 100,000 (at least 1): measured on
// the labelled crash-log corpus and 8 MB of generated SGLang/vLLM/torchrun/kernel noise. Only
// used to choose which window of a literal to index; a poor estimate costs speed, never a match.
constexpr uint16_t kFreq[128] = {
    1,    1,    1,    1,    1,    1,    1,    1,    1,    117,  666,  1,    1,    1,    1,    1,
    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,    1,
    11534, 4,   922,  332,  1,    77,   1,    60,   306,  303,  6,    1,    1444, 2129, 2022, 1084,
    5930, 3402, 2810, 1603, 1599, 1964, 1706, 1381, 1340, 1298, 3067, 6,    6,    709,  83,   1,
    1,    248,  135,  389,  197,  228,  487,  229,  146,  707,  44,   172,  151,  81,   732,  699,
    726,  2,    170,  282,  701,  118,  76,   78,   6,    13,   27,   660,  4,    681,  76,   806,
    9,    2888, 604,  1793, 1609, 5741, 666,  1424, 1135, 2045, 11,   983,  1515, 1296, 3425, 2912,
    1936, 537,  3145, 2418, 3237, 1778, 524,  197,  161,  476,  20,   36,   391,  36,   2,    1,
};

// Frequency of a folded byte in either case, for every byte (computed when compiled: a large rule
// set asks for it once per byte of every literal).
struct FreqTable {
  double f[256];
  constexpr FreqTable() : f() {
    for (int c = 0; c < 256; ++c) {
      if (c >= 128) {
        f[c] = 1;
        continue;
      }
      const int upper = (c >= 'a' && c <= 'z') ? c - 32 : c;
      f[c] = double(kFreq[c]) + (upper != c ? double(kFreq[upper]) : 0.0);
    }
  }
};
constexpr FreqTable kFreqTable;

inline double Freq(unsigned char c) { return kFreqTable.f[c]; }

struct FoldTable {
  unsigned char t[256];
  constexpr FoldTable() : t() {
    for (int c = 0; c < 256; ++c) t[c] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : (unsigned char)c;
  }
};
constexpr FoldTable kFoldTable;

// Every case variant of a byte pair, as pair-table keys.
template <typename F>
void ForEachCaseKey(unsigned char a, unsigned char b, F&& f) {
  const unsigned char as[2] = {Lower(a), Upper(a)};
  const unsigned char bs[2] = {Lower(b), Upper(b)};
  for (int x = 0; x < (as[0] == as[1] ? 1 : 2); ++x)
    for (int y = 0; y < (bs[0] == bs[1] ? 1 : 2); ++y) f(unsigned(as[x]) | (unsigned(bs[y]) << 8));
}

}  // namespace

const unsigned char LiteralScanner::kFold[256] = {
#define TRIAGE_F(c) kFoldTable.t[c]
#define TRIAGE_F8(b) TRIAGE_F(b), TRIAGE_F(b + 1), TRIAGE_F(b + 2), TRIAGE_F(b + 3), \
    TRIAGE_F(b + 4), TRIAGE_F(b + 5), TRIAGE_F(b + 6), TRIAGE_F(b + 7)
#define TRIAGE_F64(b) TRIAGE_F8(b), TRIAGE_F8(b + 8), TRIAGE_F8(b + 16), TRIAGE_F8(b + 24), \
    TRIAGE_F8(b + 32), TRIAGE_F8(b + 40), TRIAGE_F8(b + 48), TRIAGE_F8(b + 56)
    TRIAGE_F64(0), TRIAGE_F64(64), TRIAGE_F64(128), TRIAGE_F64(192)
#undef TRIAGE_F64
#undef TRIAGE_F8
#undef TRIAGE_F
};

LiteralScanner::LiteralScanner(const std::vector<std::string>& literals,
                               const std::vector<uint8_t>& keep_case) {
  Build(std::vector<std::string_view>(literals.begin(), literals.end()), keep_case);
}

LiteralScanner::LiteralScanner(const std::vector<std::string_view>& literals,
                               const std::vector<uint8_t>& keep_case) {
  Build(literals, keep_case);
}

void LiteralScanner::Build(const std::vector<std::string_view>& literals,
                           const std::vector<uint8_t>& keep_case) {
  size_t total = 0;
  for (const auto& l : literals) total += l.size();
  bytes_.reserve(total);
  begin_.reserve(literals.size() + 1);
  keep_case_.reserve(literals.size());
  begin_.push_back(0);
  for (size_t i = 0; i < literals.size(); ++i) {
    const bool exact = i < keep_case.size() && keep_case[i];
    if (exact) bytes_ += literals[i];
    else
      for (char c : literals[i]) bytes_ += char(Lower(static_cast<unsigned char>(c)));
    begin_.push_back(uint32_t(bytes_.size()));
    keep_case_.push_back(exact);
  }
  const size_t table = 65536;
  struct Spec {
    size_t width, min_len, max_len;
    bool triple;
  };
  for (const Spec spec : {Spec{8, 8, SIZE_MAX, true}, Spec{4, 4, 7, false}}) {
    Group g;
    g.width = spec.width;
    g.triple = spec.triple;
    std::vector<Entry> mine;
    std::vector<double> pair_cost;
    for (uint32_t li = 0; li < keep_case_.size(); ++li) {
      const std::string_view lit = Literal(li);
      if (lit.size() < spec.min_len || lit.size() > spec.max_len) continue;
      // The window whose bytes are rarest, the bytes that end it counting most (the scan stops
      // wherever they occur).
      // A window's cost is the sum of its byte pairs' costs, its last pair's eight times over:
      // the pairs' costs once, then each window's sum slid along the literal (a table's long
      // forms would otherwise cost a start their length times the window).
      size_t best = 0;
      double best_cost = std::numeric_limits<double>::max();
      const size_t w = spec.width;
      pair_cost.resize(lit.size() - 1);
      for (size_t i = 0; i + 1 < lit.size(); ++i)
        pair_cost[i] = Freq(static_cast<unsigned char>(lit[i])) * Freq(static_cast<unsigned char>(lit[i + 1]));
      double sum = 0;  // pairs off .. off + w - 2 of the window at `off`
      for (size_t q = 0; q + 1 < w; ++q) sum += pair_cost[q];
      for (size_t off = 0; off + w <= lit.size(); ++off) {
        if (off > 0) sum += pair_cost[off + w - 2] - pair_cost[off - 1];
        const double cost = sum + 8 * pair_cost[off + w - 2];
        if (cost < best_cost) best_cost = cost, best = off;
      }
      const uint64_t fold = keep_case_[li] ? 0 : (w == 8 ? 0x2020202020202020ull : 0x20202020ull);
      const uint64_t window =
          Window(reinterpret_cast<const unsigned char*>(lit.data()) + best, w) | fold;
      mine.push_back(Entry{li, uint32_t(best), window, fold});
    }
    if (mine.empty()) continue;
    const size_t keyed_bytes = spec.triple ? 3 : 2;
    g.shift.assign(table, uint8_t(spec.width - keyed_bytes + 1));
    std::vector<std::pair<unsigned, Entry>> bucketed;
    for (const Entry& e : mine) {
      const auto* win = reinterpret_cast<const unsigned char*>(Literal(e.literal).data()) + e.offset;
      const size_t w = spec.width;
      for (size_t q = keyed_bytes - 1; q < w; ++q) {
        const uint8_t sh = uint8_t(w - 1 - q);
        if (spec.triple) {
          const unsigned key = Key3(win, q);
          g.shift[key] = std::min(g.shift[key], sh);
        } else {
          ForEachCaseKey(win[q - 1], win[q], [&](unsigned key) {
            g.shift[key] = std::min(g.shift[key], sh);
          });
        }
      }
      if (spec.triple) bucketed.push_back({Key3(win, w - 1), e});
      else ForEachCaseKey(win[w - 2], win[w - 1], [&](unsigned key) { bucketed.push_back({key, e}); });
    }
    std::sort(bucketed.begin(), bucketed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    g.start.assign(table + 1, 0);
    for (const auto& [key, e] : bucketed) g.start[key + 1]++;
    for (size_t k = 1; k < g.start.size(); ++k) g.start[k] += g.start[k - 1];
    for (const auto& [key, e] : bucketed) g.entries.push_back(e);
    groups_.push_back(std::move(g));
  }
}

bool LiteralScanner::Verify(const Entry& e, std::string_view text, size_t window_start) const {
  const std::string_view lit = Literal(e.literal);
  if (window_start < e.offset) return false;
  const size_t begin = window_start - e.offset;
  if (begin + lit.size() > text.size()) return false;
  const auto* t = reinterpret_cast<const unsigned char*>(text.data()) + begin;
  if (keep_case_[e.literal]) return std::memcmp(t, lit.data(), lit.size()) == 0;
  for (size_t k = 0; k < lit.size(); ++k)
    if (kFold[t[k]] != static_cast<unsigned char>(lit[k])) return false;
  return true;
}

bool LiteralScanner::Any(std::string_view text) const {
  auto stop = [](size_t) { return true; };
  return ScanAll(text, stop);
}

}  // namespace triage::core::detail
