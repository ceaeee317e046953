#define TRIAGE_JSON_IMPL_NAME PortableJsonLineParser
#include "json_line_impl.inc"

namespace triage::ingest::detail {

std::unique_ptr<JsonLineParser> MakeJsonLineParserPortable() {
  return std::make_unique<PortableJsonLineParser>();
}

std::unique_ptr<JsonLineParser> MakeJsonLineParser() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("pclmul")) {
    if (auto p = MakeJsonLineParserAvx2()) return p;
  }
#endif
  return MakeJsonLineParserPortable();
}

}  // namespace triage::ingest::detail
