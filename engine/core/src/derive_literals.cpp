// Deriving prefilter literals from an RE2 pattern.
//
// The result is a cover: a set of strings such that every text the pattern matches contains at
// least one of them (ASCII case ignored). The analysis is conservative: anything it does not
// understand (classes, escapes like \d, optional or starred items, backreference-like oddities)
// breaks a literal run rather than being guessed at. Literal pieces are also cut at bytes that a
// JSON envelope may escape (`"`, `\`, `/`, control and non-ASCII bytes), so that the same
// literal can be looked for in a raw docker json-file line before it is decoded.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/rules.h"

namespace triage::core {

namespace {

bool SafeByte(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '/'; }

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

struct Info {
  std::optional<std::string> exact;  // the sub-pattern matches exactly this string
  std::optional<Cover> cover;        // every match contains one of these
};

class Deriver {
 public:
  Deriver(std::string_view p, size_t min_len) : p_(p), min_(min_len) {}

  std::optional<Cover> Run() {
    Info info = Alternation();
    if (failed_ || i_ != p_.size()) return std::nullopt;
    return Best(info);
  }

 private:
  std::optional<Cover> FromExact(const std::string& s) const {
    std::string piece = LongestSafePiece(s);
    if (piece.size() < min_) return std::nullopt;
    return Cover{piece};
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
    std::string run;
    bool all_exact = true;
    std::string whole;
    std::optional<Cover> best;
    auto consider = [&](std::optional<Cover> c) {
      if (c && (!best || Better(*c, *best))) best = std::move(c);
    };
    auto end_run = [&]() {
      if (!run.empty()) consider(FromExact(run));
      run.clear();
    };
    while (!failed_ && i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') {
      Info atom;
      bool zero_width = false;
      if (!Atom(atom, zero_width)) return {};
      if (zero_width) continue;  // flags like (?i): compared case-insensitively anyway
      int min_rep = 1, max_rep = 1;
      Quantifier(min_rep, max_rep);
      if (failed_) return {};
      if (min_rep == 1 && max_rep == 1 && atom.exact) {
        run += *atom.exact;
        whole += *atom.exact;
        continue;
      }
      all_exact = false;
      end_run();
      if (min_rep >= 1) consider(Best(atom));
    }
    end_run();
    Info out;
    if (all_exact) out.exact = whole;
    out.cover = best;
    return out;
  }

  // Reads {n}, {n,}, {n,m}, ?, *, + and their lazy/possessive suffix.
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
      if (i_ < p_.size() && (p_[i_] == '?' || p_[i_] == '+')) ++i_;  // lazy
    }
  }

  bool Atom(Info& out, bool& zero_width) {
    char c = p_[i_];
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
      // Skip the class: a ']' right after '[' or '[^' is a member.
      ++i_;
      if (i_ < p_.size() && p_[i_] == '^') ++i_;
      if (i_ < p_.size() && p_[i_] == ']') ++i_;
      while (i_ < p_.size() && p_[i_] != ']') {
        if (p_[i_] == '\\') ++i_;
        else if (p_[i_] == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          size_t close = p_.find(":]", i_ + 2);
          if (close != std::string_view::npos) i_ = close + 1;
        }
        ++i_;
      }
      if (i_ >= p_.size()) return Fail();
      ++i_;
      return true;  // no literal
    }
    if (c == '.' || c == '^' || c == '$') {
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
        out.exact = lit;
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
      if (e == 'n') return out.exact = std::string("\n"), true;
      if (e == 't') return out.exact = std::string("\t"), true;
      if (e == 'r') return out.exact = std::string("\r"), true;
      if (std::isalnum(static_cast<unsigned char>(e))) return true;  // \d \w \s \b \A \z \1 ...
      out.exact = std::string(1, e);                                  // escaped punctuation
      return true;
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') {
      // A quantifier with nothing before it: RE2 rejects it; '{' is a literal in RE2 when not
      // a repetition.
      if (c != '{') return Fail();
      ++i_;
      out.exact = std::string("{");
      return true;
    }
    // A plain byte (a UTF-8 sequence is several plain bytes: fine for a literal).
    ++i_;
    out.exact = std::string(1, c);
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

std::vector<std::string> DeriveLiterals(std::string_view pattern, size_t min_length) {
  Deriver d(pattern, std::max<size_t>(min_length, 1));
  auto cover = d.Run();
  if (!cover) return {};
  return *cover;
}

}  // namespace triage::core
