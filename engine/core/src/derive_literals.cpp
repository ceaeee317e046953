// Deriving prefilter literals from an RE2 pattern.
//
// The result is a cover: a set of strings such that every text the pattern matches contains at
// least one of them (ASCII case ignored). The analysis is conservative: anything it does not
// understand (classes, escapes like \d, optional or starred items, backreference-like oddities)
// breaks a literal run rather than being guessed at. Literal pieces are also cut at bytes that a
// JSON envelope may rewrite (control and non-ASCII bytes, `<`, `>`, `&`), so that the same
// literal can be looked for in a raw docker json-file line before it is decoded.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "triage/core/rules.h"

namespace triage::core {

namespace {

// Bytes that a JSON envelope keeps as they are (docker's encoder escapes < > & as \u003c...;
// Python's escapes every non-ASCII byte). `"` and `\` are escaped too, but predictably: the
// scanner also looks for the escaped form of a literal that holds them.
bool SafeByte(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '<' && c != '>' && c != '&'; }

// The longest run of safe bytes in `s`.
std::string LongestSafePiece(const std::string& s) {
  size_t best_b = 0, best_n = 0;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && !SafeByte(static_cast<unsigned char>(s[i]))) ++i;
    size_t b = i;
    while (i < s.size() && SafeByte(static_cast<unsigned char>(s[i]))) ++i;
    if (i - b > best_n) best_n = i - b, best_b = b;
  }
  return s.substr(best_b, best_n);
}

using Cover = std::vector<std::string>;

// Better covers have a longer shortest string, then fewer strings.
bool Better(const Cover& a, const Cover& b) {
  auto shortest = [](const Cover& c) {
    size_t m = SIZE_MAX;
    for (const auto& s : c) m = std::min(m, s.size());
    return c.empty() ? size_t(0) : m;
  };
  size_t sa = shortest(a), sb = shortest(b);
  if (sa != sb) return sa > sb;
  return a.size() < b.size();
}

// What a sub-pattern is known to match. `exact`: it matches exactly one of these strings
// (a small set: optional items and small classes expand into alternatives). `cover`: every
// match contains one of these.
struct Info {
  std::optional<std::vector<std::string>> exact;
  std::optional<Cover> cover;
};

constexpr size_t kMaxVariants = 32;

std::vector<std::string> Product(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  out.reserve(a.size() * b.size());
  for (const auto& x : a)
    for (const auto& y : b) out.push_back(x + y);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class Deriver {
 public:
  Deriver(std::string_view p, size_t min_len) : p_(p), min_(min_len) {}

  std::optional<Cover> Run() {
    Info info = Alternation();
    if (failed_ || i_ != p_.size()) return std::nullopt;
    return Best(info);
  }

 private:
  // A set of exact strings as a cover: each string's longest safe piece.
  std::optional<Cover> FromExact(const std::vector<std::string>& set) const {
    Cover out;
    for (const auto& s : set) {
      std::string piece = LongestSafePiece(s);
      if (piece.size() < min_) return std::nullopt;
      out.push_back(std::move(piece));
    }
    if (out.empty()) return std::nullopt;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::optional<Cover> Best(const Info& info) const {
    std::optional<Cover> a = info.exact ? FromExact(*info.exact) : std::nullopt;
    const std::optional<Cover>& b = info.cover;
    if (a && b) return Better(*a, *b) ? a : b;
    return a ? a : b;
  }

  Info Alternation() {
    std::vector<Info> branches;
    branches.push_back(Concat());
    while (!failed_ && i_ < p_.size() && p_[i_] == '|') {
      ++i_;
      branches.push_back(Concat());
    }
    if (branches.size() == 1) return branches[0];
    Info out;
    // Exact when every branch is exact and the union stays small.
    std::vector<std::string> uni;
    bool all_exact = true;
    for (const auto& b : branches) {
      if (!b.exact) {
        all_exact = false;
        break;
      }
      uni.insert(uni.end(), b.exact->begin(), b.exact->end());
    }
    if (all_exact && uni.size() <= kMaxVariants) {
      std::sort(uni.begin(), uni.end());
      uni.erase(std::unique(uni.begin(), uni.end()), uni.end());
      out.exact = std::move(uni);
    }
    Cover all;
    for (const auto& b : branches) {
      auto c = Best(b);
      if (!c) return out;  // one branch without a literal: the whole alternation has none
      all.insert(all.end(), c->begin(), c->end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    out.cover = std::move(all);
    return out;
  }

  Info Concat() {
    std::optional<std::vector<std::string>> run;  // the exact strings of the current run
    std::optional<std::vector<std::string>> whole{std::vector<std::string>{""}};
    std::optional<Cover> best;
    auto consider = [&](std::optional<Cover> c) {
      if (c && (!best || Better(*c, *best))) best = std::move(c);
    };
    auto end_run = [&]() {
      if (run) consider(FromExact(*run));
      run.reset();
    };
    auto extend = [&](const std::vector<std::string>& set) {
      if (!run) run = std::vector<std::string>{""};
      if (set.size() == 1) {
        // One more fixed piece (most atoms are one character): appended in place. The strings
        // stay distinct; their order may change, and every reader sorts what it keeps.
        for (auto& s : *run) s += set[0];
        if (whole)
          for (auto& s : *whole) s += set[0];
        return;
      }
      if (run->size() * set.size() > kMaxVariants) {
        // Too many variants: close the run and start a new one with this item.
        end_run();
        run = set;
      } else {
        run = Product(*run, set);
      }
      if (whole && whole->size() * set.size() <= kMaxVariants) whole = Product(*whole, set);
      else whole.reset();
    };
    while (!failed_ && i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') {
      Info atom;
      bool zero_width = false;
      if (!Atom(atom, zero_width)) return {};
      if (zero_width) continue;  // flags, anchors, \b: they consume no text
      int min_rep = 1, max_rep = 1;
      Quantifier(min_rep, max_rep);
      if (failed_) return {};
      if (atom.exact && max_rep == 1 && min_rep <= 1) {
        std::vector<std::string> set = *atom.exact;
        if (min_rep == 0) set.push_back("");  // x? : with or without
        std::sort(set.begin(), set.end());
        set.erase(std::unique(set.begin(), set.end()), set.end());
        extend(set);
        continue;
      }
      whole.reset();
      end_run();
      if (min_rep >= 1) consider(Best(atom));
    }
    end_run();
    Info out;
    out.exact = whole;
    out.cover = best;
    return out;
  }

  // Reads {n}, {n,}, {n,m}, ?, *, + and their lazy suffix.
  void Quantifier(int& min_rep, int& max_rep) {
    while (i_ < p_.size()) {
      char c = p_[i_];
      if (c == '?') min_rep = 0, ++i_;
      else if (c == '*') min_rep = 0, max_rep = -1, ++i_;
      else if (c == '+') max_rep = -1, ++i_;
      else if (c == '{') {
        size_t close = p_.find('}', i_);
        if (close == std::string_view::npos) return;  // a literal '{' in RE2
        std::string_view body = p_.substr(i_ + 1, close - i_ - 1);
        if (body.empty() || !std::isdigit(static_cast<unsigned char>(body[0]))) return;
        int n = 0;
        size_t k = 0;
        while (k < body.size() && std::isdigit(static_cast<unsigned char>(body[k])))
          n = n * 10 + (body[k++] - '0');
        min_rep = std::min(min_rep, n);
        max_rep = -1;
        i_ = close + 1;
      } else {
        return;
      }
      if (i_ < p_.size() && p_[i_] == '?') ++i_;  // lazy
    }
  }

  // A character class: its members when they are few plain bytes ([01], [af], [._-]).
  std::optional<std::vector<std::string>> Class() {
    ++i_;  // '['
    bool negated = false;
    if (i_ < p_.size() && p_[i_] == '^') negated = true, ++i_;
    std::vector<std::string> members;
    bool simple = !negated;
    bool first = true;
    while (i_ < p_.size() && (p_[i_] != ']' || first)) {
      first = false;
      char c = p_[i_];
      if (c == '\\') {
        if (i_ + 1 >= p_.size()) break;
        char e = p_[i_ + 1];
        if (std::isalnum(static_cast<unsigned char>(e))) simple = false;
        else members.push_back(std::string(1, e));
        i_ += 2;
        continue;
      }
      if (c == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
        size_t close = p_.find(":]", i_ + 2);
        if (close != std::string_view::npos) {
          i_ = close + 2;
          simple = false;
          continue;
        }
      }
      if (i_ + 2 < p_.size() && p_[i_ + 1] == '-' && p_[i_ + 2] != ']') {
        const unsigned char lo = static_cast<unsigned char>(c);
        const unsigned char hi = static_cast<unsigned char>(p_[i_ + 2]);
        if (hi >= lo && hi - lo < 4)
          for (unsigned x = lo; x <= hi; ++x) members.push_back(std::string(1, char(x)));
        else simple = false;
        i_ += 3;
        continue;
      }
      members.push_back(std::string(1, c));
      ++i_;
    }
    if (i_ >= p_.size()) {
      Fail();
      return std::nullopt;
    }
    ++i_;  // ']'
    if (!simple || members.empty() || members.size() > 4) return std::nullopt;
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    return members;
  }

  bool Atom(Info& out, bool& zero_width) {
    char c = p_[i_];
    auto one = [&](std::string s) { out.exact = std::vector<std::string>{std::move(s)}; };
    if (c == '(') {
      ++i_;
      if (i_ < p_.size() && p_[i_] == '?') {
        ++i_;
        if (i_ < p_.size() && (p_[i_] == 'P' || p_[i_] == '<')) {
          size_t close = p_.find('>', i_);
          if (close == std::string_view::npos) return Fail();
          i_ = close + 1;
        } else {
          // flags: (?i) (?s) (?-m) or (?i:...)
          while (i_ < p_.size() && p_[i_] != ')' && p_[i_] != ':') ++i_;
          if (i_ >= p_.size()) return Fail();
          if (p_[i_] == ')') {
            ++i_;
            zero_width = true;
            return true;
          }
          ++i_;  // ':'
        }
      }
      out = Alternation();
      if (failed_ || i_ >= p_.size() || p_[i_] != ')') return Fail();
      ++i_;
      return true;
    }
    if (c == '[') {
      auto members = Class();
      if (failed_) return false;
      if (members) out.exact = std::move(*members);
      return true;
    }
    if (c == '^' || c == '$') {
      ++i_;
      zero_width = true;
      return true;
    }
    if (c == '.') {
      ++i_;
      return true;
    }
    if (c == '\\') {
      if (i_ + 1 >= p_.size()) return Fail();
      char e = p_[i_ + 1];
      i_ += 2;
      if (e == 'Q') {
        size_t end = p_.find("\\E", i_);
        std::string lit(p_.substr(i_, end == std::string_view::npos ? std::string_view::npos : end - i_));
        i_ = end == std::string_view::npos ? p_.size() : end + 2;
        one(lit);
        return true;
      }
      if (e == 'b' || e == 'B' || e == 'A' || e == 'z') {
        zero_width = true;
        return true;
      }
      if (e == 'p' || e == 'P') {
        if (i_ < p_.size() && p_[i_] == '{') {
          size_t close = p_.find('}', i_);
          if (close == std::string_view::npos) return Fail();
          i_ = close + 1;
        } else if (i_ < p_.size()) {
          ++i_;
        }
        return true;
      }
      if (e == 'x') {
        if (i_ < p_.size() && p_[i_] == '{') {
          size_t close = p_.find('}', i_);
          if (close == std::string_view::npos) return Fail();
          i_ = close + 1;
        } else {
          i_ = std::min(p_.size(), i_ + 2);
        }
        return true;
      }
      if (e == 'n') return one("\n"), true;
      if (e == 't') return one("\t"), true;
      if (e == 'r') return one("\r"), true;
      if (std::isalnum(static_cast<unsigned char>(e))) return true;  // \d \w \s \1 ...
      one(std::string(1, e));                                        // escaped punctuation
      return true;
    }
    if (c == '*' || c == '+' || c == '?') return Fail();  // a quantifier with nothing before it
    // A plain byte (a UTF-8 sequence is several plain bytes: fine for a literal).
    ++i_;
    one(std::string(1, c));
    return true;
  }

  bool Fail() {
    failed_ = true;
    return false;
  }

  std::string_view p_;
  size_t min_;
  size_t i_ = 0;
  bool failed_ = false;
};

}  // namespace

bool PatternMayIgnoreCase(std::string_view pattern) {
  for (size_t at = pattern.find("(?"); at != std::string_view::npos; at = pattern.find("(?", at + 1)) {
    for (size_t k = at + 2; k < pattern.size(); ++k) {
      const char c = pattern[k];
      if (c == 'i') return true;
      if (!std::isalpha(static_cast<unsigned char>(c)) && c != '-') break;
    }
  }
  return false;
}

std::vector<std::string> DeriveLiterals(std::string_view pattern, size_t min_length, bool keep_case) {
  Deriver d(pattern, std::max<size_t>(min_length, 1));
  auto cover = d.Run();
  if (!cover) return {};
  // A string that contains another string of the cover adds nothing: whatever contains it
  // contains the shorter one too (case ignored, as the scanner compares, unless `keep_case`);
  // of equal strings the first is kept. Looked up by the lengths the cover has, not string by string: an alternation
  // of thousands of words must not cost a pass over all of them for each one.
  const size_t n = cover->size();
  std::vector<std::string> low(n);
  for (size_t i = 0; i < n; ++i) {
    low[i] = (*cover)[i];
    if (!keep_case)
      for (auto& c : low[i]) c = char(std::tolower(static_cast<unsigned char>(c)));
  }
  std::unordered_map<size_t, std::unordered_set<std::string_view>> by_length;
  for (const auto& l : low) by_length[l.size()].insert(l);
  std::unordered_set<std::string_view> seen;
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view li = low[i];
    bool redundant = !seen.insert(li).second;
    for (const auto& [len, set] : by_length) {
      if (redundant) break;
      if (len >= li.size()) continue;
      for (size_t off = 0; off + len <= li.size() && !redundant; ++off)
        redundant = set.count(li.substr(off, len)) > 0;
    }
    if (!redundant) out.push_back((*cover)[i]);
  }
  return out;
}

}  // namespace triage::core
