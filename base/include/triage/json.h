// A minimal streaming JSON writer shared by every library that emits JSON (events, reports,
// store queries, verifier facts). Strings are escaped per RFC 8259, C0 and C1 controls and DEL
// as \u00XX; invalid UTF-8 is replaced with U+FFFD so output is always valid JSON. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace triage {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);  // non-finite values become null
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  JsonWriter& Raw(std::string_view json);  // a value that is already JSON
  JsonWriter& OptString(const std::optional<std::string>& s) { return s ? String(*s) : Null(); }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Separate();
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `s` as a JSON string literal (quotes included) to `out`.
void AppendJsonString(std::string& out, std::string_view s);

// `s` with invalid UTF-8 sequences replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view s);
bool IsValidUtf8(std::string_view s);

}  // namespace triage
