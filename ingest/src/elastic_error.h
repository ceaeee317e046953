// torchrun's error files (TORCHELASTIC_ERROR_FILE): the JSON document that
// torch.distributed.elastic's error handler (errors/error_handler.py, record_exception) writes
// for a worker that raised under @record:
//   {"message": {"message": "<type>: <text>",
//                "extraInfo": {"py_callstack": "<the traceback>", "timestamp": "<epoch seconds>"}}}
// and, once the agent has copied it as the root cause's, with "errorCode": <exit code> beside
// "message". The error handler writes it in one line (json.dump).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace triage::ingest::detail {

struct ElasticError {
  std::string message;    // "<type>: <text>"
  std::string callstack;  // the Python traceback, lines joined with '\n'; empty: none
  std::string timestamp;  // seconds since the epoch, as written; empty: none
  std::optional<int64_t> error_code;
};

// Reads `json` as an error file; false when it is not one (not JSON, no object "message" with
// a string "message" in it). Nesting deeper than 32 levels is refused.
bool ParseElasticError(std::string_view json, ElasticError& out);

}  // namespace triage::ingest::detail
