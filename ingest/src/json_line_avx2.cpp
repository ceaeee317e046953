// Built with -mavx2 -mbmi -mpclmul on x86-64 (see ingest/CMakeLists.txt): only reached after a
// run-time check of the CPU.
#if defined(__x86_64__) && defined(__AVX2__)
#define TRIAGE_JSON_IMPL_NAME Avx2JsonLineParser
#include "json_line_impl.inc"

namespace triage::ingest::detail {
std::unique_ptr<JsonLineParser> MakeJsonLineParserAvx2() { return std::make_unique<Avx2JsonLineParser>(); }
}  // namespace triage::ingest::detail
#else
#include "json_line.h"
namespace triage::ingest::detail {
std::unique_ptr<JsonLineParser> MakeJsonLineParserAvx2() { return nullptr; }
}  // namespace triage::ingest::detail
#endif
