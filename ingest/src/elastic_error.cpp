// torchrun's error files (elastic_error.h): a small reader of the JSON the error handler
// writes, values it does not use skipped whatever they hold.
#include "elastic_error.h"

#include <cstdint>

#include "wrapper.h"

namespace triage::ingest::detail {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  bool Document(ElasticError& out) {
    return Object(0, [&](std::string_view key) {
             if (key != "message") return Skip(0);
             if (Peek() == '"') return String(&out.message);  // an older writer: a string
             return Object(1, [&](std::string_view k) {
               if (k == "message") return String(&out.message);
               if (k == "errorCode") return Integer(out.error_code);
               if (k != "extraInfo") return Skip(1);
               return Object(2, [&](std::string_view e) {
                 if (e == "py_callstack") return Peek() == '"' ? String(&out.callstack) : Skip(2);
                 if (e == "timestamp") return Peek() == '"' ? String(&out.timestamp) : Skip(2);
                 return Skip(2);
               });
             });
           }) &&
           AtEnd() && !out.message.empty();
  }

 private:
  static constexpr int kMaxDepth = 32;

  char Peek() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }
  bool AtEnd() { return Peek() == '\0' && i_ == s_.size(); }

  // An object whose members are each handed to `member` (key; the value is its to read).
  template <typename F>
  bool Object(int depth, F&& member) {
    if (depth > kMaxDepth || !Eat('{')) return false;
    if (Eat('}')) return true;
    for (;;) {
      std::string key;
      if (!String(&key) || !Eat(':') || !member(std::string_view(key))) return false;
      if (Eat('}')) return true;
      if (!Eat(',')) return false;
    }
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool Hex4(uint32_t& v) {
    if (i_ + 4 > s_.size()) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = Hex(s_[i_ + size_t(k)]);
      if (h < 0) return false;
      v = v * 16 + uint32_t(h);
    }
    i_ += 4;
    return true;
  }

  // A string; its value into `out` unless null. A lone surrogate becomes U+FFFD.
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out) out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      char plain = 0;
      switch (e) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 1 < s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            const size_t back = i_;
            i_ += 2;
            uint32_t lo = 0;
            if (Hex4(lo) && lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else i_ = back;
          }
          if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
          if (out) AppendUtf8(*out, cp);
          continue;
        }
        default:
          return false;
      }
      if (out) out->push_back(plain);
    }
    return false;
  }
  bool Integer(std::optional<int64_t>& out) {
    Peek();
    bool negative = false;
    if (i_ < s_.size() && s_[i_] == '-') {
      negative = true;
      ++i_;
    }
    const size_t start = i_;
    int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9' && i_ - start < 18) v = v * 10 + (s_[i_++] - '0');
    if (i_ == start) return false;
    if (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') return false;
    out = negative ? -v : v;
    return true;
  }
  // Any value, read and dropped.
  bool Skip(int depth) {
    if (depth > kMaxDepth) return false;
    const char c = Peek();
    if (c == '"') return String(nullptr);
    if (c == '{') return Object(depth + 1, [&](std::string_view) { return Skip(depth + 1); });
    if (c == '[') {
      ++i_;
      if (Eat(']')) return true;
      for (;;) {
        if (!Skip(depth + 1)) return false;
        if (Eat(']')) return true;
        if (!Eat(',')) return false;
      }
    }
    // A number, true, false or null: the bytes that can make one.
    const size_t start = i_;
    while (i_ < s_.size()) {
      const char b = s_[i_];
      const bool ok = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || b == '-' || b == '+' || b == '.' ||
                      b == 'E';
      if (!ok) break;
      ++i_;
    }
    return i_ > start;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

bool ParseElasticError(std::string_view json, ElasticError& out) {
  out = ElasticError{};
  return Reader(json).Document(out);
}

}  // namespace triage::ingest::detail
