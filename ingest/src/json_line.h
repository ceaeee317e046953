// JSON-line parsing behind one small interface, so that simdjson stays inside two translation
// units: one built for AVX2 hosts (simdjson's haswell kernel) and one portable, chosen at run
// time. simdjson's on-demand front end is compiled for one instruction set per translation
// unit, hence the two builds of json_line_impl.inc.
#pragma once

#include <memory>
#include <string_view>

namespace triage::ingest::detail {

// What a JSON log line says. Views stay valid until the next Parse.
struct JsonFields {
  std::string_view text;  // msg / message / log / text, by that priority
  bool has_text = false;
  std::string_view time;
  std::string_view level;
  std::string_view container;
  // Set by ParseSimpleJsonLine: `raw` was all ASCII, so every value is valid UTF-8 ...
  bool simple = false;
  // ... and holds only bytes of `raw` and of one-letter escapes, unless a \uXXXX was decoded.
  bool unicode_escapes = false;
};

// Which keys fill which field, shared by every parser so that they agree: the first of
// msg / message / log / text (by that priority, the first occurrence of each), and the last
// occurrence of a time, level or container key. Only string values count.
class JsonFieldPicker {
 public:
  void Add(std::string_view key, std::string_view value, JsonFields& out) {
    int slot = key == "msg" ? 0 : key == "message" ? 1 : key == "log" ? 2 : key == "text" ? 3 : -1;
    if (slot >= 0) {
      if (!have_[slot]) {
        msg_[slot] = value;
        have_[slot] = true;
      }
    } else if (key == "time" || key == "timestamp" || key == "ts" || key == "@timestamp" || key == "asctime") {
      out.time = value;
    } else if (key == "level" || key == "levelname" || key == "severity" || key == "lvl" || key == "loglevel") {
      out.level = value;
    } else if (key == "container_name" || key == "container") {
      out.container = value;
    }
  }
  void Finish(JsonFields& out) const {
    for (int k = 0; k < 4; ++k) {
      if (have_[k]) {
        out.text = msg_[k];
        out.has_text = true;
        return;
      }
    }
  }

 private:
  std::string_view msg_[4];  // msg, message, log, text
  bool have_[4] = {false, false, false, false};
};

// The common shape of a JSON log line, read without simdjson: one object whose values are all
// strings, with ASCII bytes only, keys without escapes and no surrogate escapes in the values
// (docker's json-file lines, most loggers' JSON). Fills `out`, which must be as
// default-constructed, as JsonLineParser::Parse would and returns true; false means "not this
// shape" (a number, a nested value, a non-ASCII byte, a malformed line...), which the full
// parser then decides. Values with escapes are unescaped into `scratch`; the views in `out`
// point into `raw` or `scratch`.
bool ParseSimpleJsonLine(std::string_view raw, JsonFields& out, std::string& scratch);

class JsonLineParser {
 public:
  virtual ~JsonLineParser() = default;
  // False when `raw` is not one well-formed JSON object. `out` must be as default-constructed
  // (the simple-first parser does not clear it again).
  virtual bool Parse(std::string_view raw, JsonFields& out) = 0;
};

// The simple shape first (ParseSimpleJsonLine), the full parser for the rest.
std::unique_ptr<JsonLineParser> MakeJsonLineParser();
std::unique_ptr<JsonLineParser> MakeJsonLineParserPortable();
std::unique_ptr<JsonLineParser> MakeJsonLineParserAvx2();  // nullptr when not built for x86-64

}  // namespace triage::ingest::detail
