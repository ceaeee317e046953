#define TRIAGE_JSON_IMPL_NAME PortableJsonLineParser
#include "json_line_impl.inc"

namespace triage::ingest::detail {

std::unique_ptr<JsonLineParser> MakeJsonLineParserPortable() {
  return std::make_unique<PortableJsonLineParser>();
}

namespace {

// ParseSimpleJsonLine first; `full` for the lines it hands back.
class SimpleFirstJsonLineParser final : public JsonLineParser {
 public:
  explicit SimpleFirstJsonLineParser(std::unique_ptr<JsonLineParser> full) : full_(std::move(full)) {}
  bool Parse(std::string_view raw, JsonFields& out) override {
    return ParseSimpleJsonLine(raw, out, scratch_) || full_->Parse(raw, out);
  }

 private:
  std::unique_ptr<JsonLineParser> full_;
  std::string scratch_;  // unescaped values of the last simple line
};

std::unique_ptr<JsonLineParser> MakeFullJsonLineParser() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("pclmul")) {
    if (auto p = MakeJsonLineParserAvx2()) return p;
  }
#endif
  return MakeJsonLineParserPortable();
}

}  // namespace

std::unique_ptr<JsonLineParser> MakeJsonLineParser() {
  return std::make_unique<SimpleFirstJsonLineParser>(MakeFullJsonLineParser());
}

}  // namespace triage::ingest::detail
