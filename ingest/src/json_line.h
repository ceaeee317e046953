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
};

class JsonLineParser {
 public:
  virtual ~JsonLineParser() = default;
  // False when `raw` is not one well-formed JSON object.
  virtual bool Parse(std::string_view raw, JsonFields& out) = 0;
};

std::unique_ptr<JsonLineParser> MakeJsonLineParser();
std::unique_ptr<JsonLineParser> MakeJsonLineParserPortable();
std::unique_ptr<JsonLineParser> MakeJsonLineParserAvx2();  // nullptr when not built for x86-64

}  // namespace triage::ingest::detail
