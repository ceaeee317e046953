#include "wrapper.h"

#include <cstring>
#include <ctime>

#include "elastic_error.h"

namespace triage::ingest::detail {

namespace {

constexpr size_t npos = std::string_view::npos;
// How many non-blank lines at a source's start may show its wrapper.
constexpr int kProbeLines = 4;

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool Digits(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return false;
  for (size_t k = 0; k < n; ++k)
    if (!IsDigit(s[i + k])) return false;
  return true;
}

// The end of an RFC 3339 time at s[0] (`YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)`), or npos.
// A zone is required: CRI and RFC 5424 always write one.
size_t Rfc3339End(std::string_view s) {
  if (s.size() < 20 || !Digits(s, 0, 4) || s[4] != '-' || !Digits(s, 5, 2) || s[7] != '-' ||
      !Digits(s, 8, 2) || (s[10] != 'T' && s[10] != 't') || !Digits(s, 11, 2) || s[13] != ':' ||
      !Digits(s, 14, 2) || s[16] != ':' || !Digits(s, 17, 2))
    return npos;
  size_t e = 19;
  if (e < s.size() && s[e] == '.') {
    size_t f = ++e;
    while (e < s.size() && IsDigit(s[e])) ++e;
    if (e == f) return npos;
  }
  if (e < s.size() && (s[e] == 'Z' || s[e] == 'z')) return e + 1;
  if (e < s.size() && (s[e] == '+' || s[e] == '-') && Digits(s, e + 1, 2) && e + 3 < s.size() &&
      s[e + 3] == ':' && Digits(s, e + 4, 2))
    return e + 6;
  return npos;
}

// CRI: the parts of `<time> <stream> <tag> <text>`; false when `raw` is not in that shape.
struct CriLine {
  std::string_view time, stream, text;
  bool partial = false;
};
bool ParseCri(std::string_view raw, CriLine& out) {
  const size_t te = Rfc3339End(raw);
  if (te == npos || te >= raw.size() || raw[te] != ' ') return false;
  const size_t s = te + 1;
  const size_t se = raw.find(' ', s);
  if (se == npos || se == s || se - s > 16) return false;
  const size_t t = se + 1;
  size_t tend = t;
  while (tend < raw.size() && raw[tend] != ' ') ++tend;
  if (tend == t || tend - t > 16) return false;
  // The tags are ':'-separated; the first says whether the line goes on (P) or ends here (F).
  const char first = raw[t];
  if (first != 'P' && first != 'F') return false;
  if (tend > t + 1 && raw[t + 1] != ':') return false;
  out.time = raw.substr(0, te);
  out.stream = raw.substr(s, se - s);
  out.partial = first == 'P';
  out.text = tend < raw.size() ? raw.substr(tend + 1) : std::string_view();
  return true;
}

// Severity (0..7, syslog's numbering) to the level worth giving: 5 (notice), 6 (info) and
// 7 (debug) are what a captured stdout/stderr gets by default, and are not given.
const char* SeverityLevel(int severity) {
  if (severity < 0) return nullptr;
  if (severity <= 2) return "CRITICAL";
  if (severity == 3) return "ERROR";
  if (severity == 4) return "WARNING";
  return nullptr;
}

// "2026-11-02T09:14:51.123456Z" from microseconds since the epoch; false when out of range.
bool FormatMicros(std::string_view digits, std::string& out) {
  if (digits.empty() || digits.size() > 18) return false;
  uint64_t us = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    us = us * 10 + uint64_t(c - '0');
  }
  const std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return false;
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (n == 0) return false;
  out.assign(buf, n);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06uZ", unsigned(us % 1000000));
  out += frac;
  return true;
}


// A reader for journald's export objects: one flat object whose values are strings, numbers,
// arrays of byte values (binary fields) or arrays of strings (a field given more than once: the
// first is taken). Only the fields journald's wrapper uses are kept; the rest are skipped.
class JournalObject {
 public:
  struct Field {
    std::string value;
    bool present = false;
  };
  Field message, realtime, hostname, identifier, comm, pid, syslog_pid, priority, transport, unit;

  bool Parse(std::string_view s) {
    for (Field* f : {&message, &realtime, &hostname, &identifier, &comm, &pid, &syslog_pid, &priority,
                     &transport, &unit}) {
      f->present = false;
      f->value.clear();
    }
    s_ = s;
    p_ = 0;
    Ws();
    if (!Eat('{')) return false;
    Ws();
    if (Eat('}')) return End();
    for (;;) {
      Ws();
      if (!String(&key_)) return false;
      Ws();
      if (!Eat(':')) return false;
      Ws();
      Field* f = Slot(key_);
      if (!Value(f)) return false;
      Ws();
      if (Eat(',')) continue;
      if (Eat('}')) return End();
      return false;
    }
  }

 private:
  Field* Slot(std::string_view k) {
    if (k == "MESSAGE") return &message;
    if (k == "__REALTIME_TIMESTAMP") return &realtime;
    if (k == "_HOSTNAME") return &hostname;
    if (k == "SYSLOG_IDENTIFIER") return &identifier;
    if (k == "_COMM") return &comm;
    if (k == "_PID") return &pid;
    if (k == "SYSLOG_PID") return &syslog_pid;
    if (k == "PRIORITY") return &priority;
    if (k == "_TRANSPORT") return &transport;
    if (k == "_SYSTEMD_UNIT") return &unit;
    return nullptr;
  }
  bool End() {
    Ws();
    return p_ == s_.size();
  }
  void Ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r' || s_[p_] == '\n')) ++p_;
  }
  bool Eat(char c) {
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  int Hex4() {
    if (p_ + 4 > s_.size()) return -1;
    int v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[p_ + size_t(k)];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else return -1;
    }
    p_ += 4;
    return v;
  }
  // A string at p_; its decoded value goes to *out unless out is null (skipped).
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    if (out) out->clear();
    for (;;) {
      const size_t q = s_.find_first_of("\"\\", p_);
      if (q == npos) return false;
      if (out) out->append(s_.substr(p_, q - p_));
      p_ = q + 1;
      if (s_[q] == '"') return true;
      if (p_ >= s_.size()) return false;
      const char e = s_[p_++];
      if (!out) {
        if (e == 'u' && Hex4() < 0) return false;
        continue;
      }
      switch (e) {
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'u': {
          int cp = Hex4();
          if (cp < 0) return false;
          uint32_t c = uint32_t(cp);
          if (c >= 0xD800 && c < 0xDC00 && p_ + 1 < s_.size() && s_[p_] == '\\' && s_[p_ + 1] == 'u') {
            p_ += 2;
            const int lo = Hex4();
            if (lo >= 0xDC00 && lo < 0xE000) c = 0x10000 + ((c - 0xD800) << 10) + (uint32_t(lo) - 0xDC00);
            else c = 0xFFFD;
          } else if (c >= 0xD800 && c < 0xE000) {
            c = 0xFFFD;  // a lone surrogate
          }
          AppendUtf8(*out, c);
          break;
        }
        default: out->push_back(e); break;
      }
    }
  }
  bool Number(std::string* out) {
    const size_t b = p_;
    while (p_ < s_.size() && (IsDigit(s_[p_]) || s_[p_] == '-' || s_[p_] == '+' || s_[p_] == '.' ||
                              s_[p_] == 'e' || s_[p_] == 'E'))
      ++p_;
    if (p_ == b) return false;
    if (out) out->assign(s_.substr(b, p_ - b));
    return true;
  }
  bool Value(Field* f) {
    if (p_ >= s_.size()) return false;
    std::string* out = f ? &f->value : nullptr;
    const char c = s_[p_];
    bool ok = false;
    if (c == '"') {
      ok = String(out);
    } else if (c == '[') {
      ok = Array(out);
    } else if (c == '{') {
      ok = SkipNested();
      if (out) out->clear();
    } else if (s_.substr(p_, 4) == "null") {
      p_ += 4;
      return true;  // as if absent
    } else if (s_.substr(p_, 4) == "true" || s_.substr(p_, 5) == "false") {
      p_ += s_[p_] == 't' ? 4 : 5;
      ok = true;
    } else {
      ok = Number(out);
    }
    if (ok && f) f->present = true;
    return ok;
  }
  // [72, 105] (bytes) or ["a", "b"] (repeated field: the first) or [[...]] (repeated binary).
  bool Array(std::string* out) {
    ++p_;
    if (out) out->clear();
    bool first = true;
    bool bytes = true;
    Ws();
    if (Eat(']')) return true;
    for (;;) {
      Ws();
      if (p_ >= s_.size()) return false;
      if (s_[p_] == '"') {
        bytes = false;
        if (!String(first && out ? out : nullptr)) return false;
      } else if (s_[p_] == '[') {
        bytes = false;
        if (!Array(first && out ? out : nullptr)) return false;
      } else if (bytes) {
        size_t b = p_;
        unsigned v = 0;
        while (p_ < s_.size() && IsDigit(s_[p_]) && p_ - b < 3) v = v * 10 + unsigned(s_[p_++] - '0');
        if (p_ == b || v > 255) return false;
        if (out) out->push_back(char(v));
      } else {
        return false;
      }
      first = false;
      Ws();
      if (Eat(',')) continue;
      return Eat(']');
    }
  }
  bool SkipNested() {
    int depth = 0;
    while (p_ < s_.size()) {
      const char c = s_[p_];
      if (c == '"') {
        if (!String(nullptr)) return false;
        continue;
      }
      ++p_;
      if (c == '{' || c == '[') ++depth;
      else if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
  }

  std::string_view s_;
  size_t p_ = 0;
  std::string key_;
};

// A token of RFC 5424's header at s[i] up to the next space: its end, or npos.
size_t TokenEnd(std::string_view s, size_t i, size_t max) {
  const size_t e = s.find(' ', i);
  if (e == npos || e == i || e - i > max) return npos;
  return e;
}

// The structured data at s[i]: "-" or one or more [id param="value"...] elements whose values
// may hold escaped '"', '\' and ']'. Returns its end, or npos.
size_t StructuredDataEnd(std::string_view s, size_t i) {
  if (i < s.size() && s[i] == '-') return i + 1;
  size_t p = i;
  while (p < s.size() && s[p] == '[') {
    ++p;
    bool quoted = false;
    for (;; ++p) {
      if (p >= s.size()) return npos;
      const char c = s[p];
      if (quoted && c == '\\') {
        ++p;
        continue;
      }
      if (c == '"') quoted = !quoted;
      else if (c == ']' && !quoted) break;
    }
    ++p;
  }
  return p == i ? npos : p;
}

struct SyslogLine {
  int severity = -1;
  std::string_view time, host, app, procid, text;
};

bool ParseSyslog5424(std::string_view s, SyslogLine& out) {
  if (s.size() < 8 || s[0] != '<') return false;
  size_t p = 1;
  int pri = 0;
  while (p < s.size() && p < 5 && IsDigit(s[p])) pri = pri * 10 + (s[p++] - '0');
  if (p == 1 || p >= s.size() || s[p] != '>' || pri > 191) return false;
  ++p;
  // VERSION: 1 (up to two digits), then a space.
  const size_t v = p;
  while (p < s.size() && IsDigit(s[p]) && p - v < 2) ++p;
  if (p == v || p >= s.size() || s[p] != ' ' || s[v] == '0') return false;
  ++p;
  size_t e;
  if (s[p] == '-') {
    e = p + 1;
  } else {
    const size_t t = Rfc3339End(s.substr(p));
    if (t == npos) return false;
    e = p + t;
    out.time = s.substr(p, t);
  }
  if (e >= s.size() || s[e] != ' ') return false;
  std::string_view* fields[] = {&out.host, &out.app, &out.procid, nullptr};
  p = e + 1;
  for (std::string_view* f : fields) {  // HOSTNAME APP-NAME PROCID MSGID
    e = TokenEnd(s, p, 255);
    if (e == npos) return false;
    std::string_view tok = s.substr(p, e - p);
    if (f && tok != "-") *f = tok;
    p = e + 1;
  }
  e = StructuredDataEnd(s, p);
  if (e == npos) return false;
  p = e;
  if (p < s.size()) {
    if (s[p] != ' ') return false;
    ++p;
  }
  std::string_view msg = s.substr(p);
  if (msg.size() >= 3 && std::memcmp(msg.data(), "\xEF\xBB\xBF", 3) == 0) msg.remove_prefix(3);
  out.text = msg;
  out.severity = pri % 8;
  return true;
}

// "2026-11-02T09:14:51Z" from seconds since the epoch (a string of digits); false when out of
// range.
bool FormatSeconds(std::string_view digits, std::string& out) {
  if (digits.empty() || digits.size() > 12) return false;
  int64_t v = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  const std::time_t secs = static_cast<std::time_t>(v);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return false;
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (n == 0) return false;
  out.assign(buf, n);
  return true;
}

// A torchrun error file: an object whose "message" is an object, holding the error handler's
// "extraInfo" or the agent's "errorCode".
bool LooksLikeElasticError(std::string_view raw) {
  size_t i = 0;
  while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) ++i;
  if (i >= raw.size() || raw[i] != '{' || raw.find("\"message\"") == npos) return false;
  if (raw.find("\"extraInfo\"") == npos && raw.find("\"errorCode\"") == npos) return false;
  ElasticError e;
  return ParseElasticError(raw, e);
}

bool LooksLikeJournal(std::string_view raw) {
  size_t i = 0;
  while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) ++i;
  if (i >= raw.size() || raw[i] != '{') return false;
  return raw.find("\"__REALTIME_TIMESTAMP\"") != npos || raw.find("\"__CURSOR\"") != npos;
}

int StreamIndex(std::string_view stream) {
  if (stream == "stdout") return 0;
  if (stream == "stderr") return 1;
  return 2;
}

}  // namespace

// A code point as UTF-8.
void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

const char* WrapperKindName(WrapperKind kind) {
  switch (kind) {
    case WrapperKind::kCri:
      return "cri";
    case WrapperKind::kJournalJson:
      return "journald-json";
    case WrapperKind::kSyslog5424:
      return "rfc5424";
    case WrapperKind::kElasticError:
      return "torchelastic-error";
    case WrapperKind::kNone:
      break;
  }
  return "none";
}

WrapperReader::WrapperReader(size_t cap) : cap_(cap == 0 ? 1 : cap) {}

void WrapperReader::Probe(std::string_view raw) {
  if (!probing_) return;
  size_t i = 0;
  while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r')) ++i;
  if (i == raw.size()) return;  // blank lines say nothing
  CriLine cri;
  SyslogLine sys;
  if (ParseCri(raw, cri)) kind_ = WrapperKind::kCri;
  else if (LooksLikeJournal(raw)) kind_ = WrapperKind::kJournalJson;
  else if (ParseSyslog5424(raw, sys)) kind_ = WrapperKind::kSyslog5424;
  else if (probed_ == 0 && LooksLikeElasticError(raw)) kind_ = WrapperKind::kElasticError;
  if (kind_ != WrapperKind::kNone || ++probed_ >= kProbeLines) probing_ = false;
}

bool WrapperReader::MustPeel(std::string_view raw) const {
  switch (kind_) {
    case WrapperKind::kCri: {
      CriLine c;
      return ParseCri(raw, c) && c.partial;
    }
    case WrapperKind::kJournalJson:
      return raw.find("\"MESSAGE\":[") != npos || raw.find("\"MESSAGE\" : [") != npos;
    case WrapperKind::kElasticError:
      return true;  // its lines are escaped inside the document
    case WrapperKind::kSyslog5424:
    case WrapperKind::kNone:
      break;
  }
  return false;
}

size_t WrapperReader::FindMustPeel(std::string_view lines) const {
  const char* base = lines.data();
  auto find = [&](size_t from, std::string_view needle) -> size_t {
    if (from >= lines.size()) return npos;
    const void* hit = memmem(base + from, lines.size() - from, needle.data(), needle.size());
    return hit ? size_t(static_cast<const char*>(hit) - base) : npos;
  };
  switch (kind_) {
    case WrapperKind::kCri: {
      // " P " after `<time> <stream>` with nothing else before it on its line.
      for (size_t at = find(0, " P "); at != npos; at = find(at + 1, " P ")) {
        const void* nl = at > 0 ? memrchr(base, '\n', at) : nullptr;
        const size_t start = nl ? size_t(static_cast<const char*>(nl) - base) + 1 : 0;
        CriLine c;
        const size_t end = lines.find('\n', at);
        if (ParseCri(lines.substr(start, (end == npos ? lines.size() : end) - start), c) && c.partial &&
            c.text.data() == base + at + 3)
          return at;
      }
      return npos;
    }
    case WrapperKind::kJournalJson: {
      const size_t a = find(0, "\"MESSAGE\":[");
      const size_t b = find(0, "\"MESSAGE\" : [");
      return a < b ? a : b;
    }
    case WrapperKind::kElasticError:
      return lines.empty() ? npos : 0;
    case WrapperKind::kSyslog5424:
    case WrapperKind::kNone:
      break;
  }
  return npos;
}

void WrapperReader::PassThrough(const LineView& line) {
  WrappedRecord& r = out_.emplace_back();
  r.line = line;
}

const std::vector<WrappedRecord>& WrapperReader::Peel(const LineView& line) {
  out_.clear();
  switch (kind_) {
    case WrapperKind::kCri:
      PeelCri(line);
      break;
    case WrapperKind::kJournalJson:
      PeelJournal(line);
      break;
    case WrapperKind::kSyslog5424:
      PeelSyslog(line);
      break;
    case WrapperKind::kElasticError:
      PeelElasticError(line);
      break;
    case WrapperKind::kNone:
      PassThrough(line);
      break;
  }
  return out_;
}

void WrapperReader::EmitPiece(Piece& p) {
  const int k = int(&p - pieces_);
  emitted_[k].swap(p.text);
  emitted_time_[k].swap(p.time);
  p.text.clear();
  p.open = false;
  --open_;
  WrappedRecord& r = out_.emplace_back();
  r.line.number = p.number;
  r.line.offset = p.offset;
  r.line.raw = emitted_[k];
  r.line.full_length = p.full_length;
  r.line.cut = p.cut || p.full_length > cap_;
  r.fields.time = emitted_time_[k];
}

void WrapperReader::PeelCri(const LineView& line) {
  CriLine c;
  if (!ParseCri(line.raw, c)) {
    PassThrough(line);
    return;
  }
  Piece& p = pieces_[StreamIndex(c.stream)];
  if (!c.partial && !p.open) {
    // The usual line: whole in one piece; its text is a part of the raw line, so what the
    // framer's scan ruled out for the raw line holds for it too.
    WrappedRecord& r = out_.emplace_back();
    r.line = line;
    r.line.raw = c.text;
    const uint64_t prefix = uint64_t(c.text.data() - line.raw.data());
    r.line.full_length = line.full_length > prefix ? line.full_length - prefix : 0;
    r.fields.time = c.time;
    return;
  }
  if (!p.open) {
    p.open = true;
    ++open_;
    p.number = line.number;
    p.offset = line.offset;
    p.full_length = 0;
    p.cut = false;
    p.text.clear();
    p.time.assign(c.time);
  }
  // A cut physical line loses the tail of its piece: the joined line is cut there too.
  const uint64_t prefix = uint64_t(c.text.data() - line.raw.data());
  const uint64_t piece_length = line.full_length > prefix ? line.full_length - prefix : 0;
  p.full_length += piece_length;
  p.cut = p.cut || line.cut;
  if (p.text.size() < cap_) p.text.append(c.text.substr(0, cap_ - p.text.size()));
  if (!c.partial) EmitPiece(p);
}

const std::vector<WrappedRecord>& WrapperReader::Flush() {
  out_.clear();
  for (Piece& p : pieces_)
    if (p.open) EmitPiece(p);
  return out_;
}

std::string_view WrapperReader::ProcessFor(std::string_view origin_key, std::string_view process) {
  if (origin_key.empty()) return {};
  if (!have_first_origin_) {
    first_origin_.assign(origin_key);
    have_first_origin_ = true;
  }
  if (origin_key == first_origin_) return {};
  return process;
}

void WrapperReader::PeelJournal(const LineView& line) {
  static thread_local JournalObject obj;
  if (!obj.Parse(line.raw) || !obj.message.present) {
    PassThrough(line);
    return;
  }
  message_.swap(obj.message.value);
  WrapperFields f;
  if (obj.realtime.present && FormatMicros(obj.realtime.value, time_)) f.time = time_;
  if (obj.hostname.present && !obj.hostname.value.empty()) {
    host_.swap(obj.hostname.value);
    f.host = host_;
  }
  // PRIORITY counts unless the line came through a captured stdout/stderr, where every line
  // gets the unit's default (info) whatever it says.
  if (obj.priority.present && obj.priority.value.size() == 1 && IsDigit(obj.priority.value[0])) {
    const int severity = obj.priority.value[0] - '0';
    const bool captured = !obj.transport.present || obj.transport.value == "stdout";
    if (!(captured && severity >= 5)) f.level = SeverityLevel(severity);
  }
  const JournalObject::Field& ident = obj.identifier.present ? obj.identifier
                                      : obj.comm.present     ? obj.comm
                                                             : obj.unit;
  const JournalObject::Field& pid = obj.pid.present ? obj.pid : obj.syslog_pid;
  if (ident.present && !ident.value.empty()) {
    process_.assign(ident.value);
    const size_t name_end = process_.size();
    if (pid.present && !pid.value.empty()) {
      process_.push_back('[');
      process_.append(pid.value);
      process_.push_back(']');
    }
    f.process = ProcessFor(std::string_view(process_).substr(0, name_end), process_);
  }
  EmitLines(line, f);
}

void WrapperReader::EmitLines(const LineView& line, const WrapperFields& f) {
  // One record per line of the message; a trailing newline ends the last one.
  std::string_view m = message_;
  if (!m.empty() && m.back() == '\n') m.remove_suffix(1);
  size_t from = 0;
  for (;;) {
    size_t nl = m.find('\n', from);
    std::string_view part = m.substr(from, nl == npos ? npos : nl - from);
    if (!part.empty() && part.back() == '\r') part.remove_suffix(1);
    WrappedRecord& r = out_.emplace_back();
    r.line.number = line.number;
    r.line.offset = line.offset;
    r.line.full_length = part.size();
    r.line.cut = line.cut || part.size() > cap_;
    r.line.raw = part.substr(0, cap_);
    r.fields = f;
    if (nl == npos) break;
    from = nl + 1;
  }
}

void WrapperReader::PeelElasticError(const LineView& line) {
  static thread_local ElasticError e;
  if (!ParseElasticError(line.raw, e)) {
    PassThrough(line);
    return;
  }
  // The traceback ends with the exception's line, which is the message; without one (the
  // handler's "<N/A>", or none written), the message alone.
  const bool callstack = !e.callstack.empty() && e.callstack.find('\n') != npos;
  message_.swap(callstack ? e.callstack : e.message);
  WrapperFields f;
  if (FormatSeconds(e.timestamp, time_)) f.time = time_;
  f.level = "ERROR";
  EmitLines(line, f);
}

void WrapperReader::PeelSyslog(const LineView& line) {
  SyslogLine s;
  if (!ParseSyslog5424(line.raw, s)) {
    PassThrough(line);
    return;
  }
  WrappedRecord& r = out_.emplace_back();
  r.line = line;
  r.line.raw = s.text;
  const uint64_t prefix = uint64_t(s.text.data() - line.raw.data());
  r.line.full_length = line.full_length > prefix ? line.full_length - prefix : 0;
  r.fields.time = s.time;
  r.fields.host = s.host;
  r.fields.level = SeverityLevel(s.severity);
  if (!s.app.empty()) {
    process_.assign(s.app);
    if (!s.procid.empty()) {
      process_.push_back('[');
      process_.append(s.procid);
      process_.push_back(']');
    }
    r.fields.process = ProcessFor(s.app, process_);
  }
}

}  // namespace triage::ingest::detail
