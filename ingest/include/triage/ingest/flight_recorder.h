// PyTorch's NCCL Flight Recorder dumps: what each rank's process group recorded of its last
// collectives, as the watchdog writes it on a timeout (TORCH_NCCL_DUMP_ON_TIMEOUT=1) to
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank> ("nccl_trace_rank_0"): a pickle (protocol 2) of one
// dict, read here without Python and without running anything a pickle could ask for. Only the
// subset the recorder writes is accepted: dicts, lists, tuples, strings, ints, floats, None and
// booleans, with the memo; any other opcode (globals, object construction, persistent ids)
// refuses the dump.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/status.h"

namespace triage::ingest {

// One collective as the recorder saw it.
struct FlightRecorderEntry {
  int64_t record_id = -1;
  int64_t collective_seq_id = -1;  // the process group's collective number (1, 2, ...)
  int64_t p2p_seq_id = -1;
  bool is_p2p = false;
  std::string process_group;       // the group's name ("0")
  std::string profiling_name;      // "nccl:all_reduce", "nccl:all_reduce_barrier"
  std::string state;               // "scheduled", "started", "completed"
  std::vector<std::vector<int64_t>> input_sizes, output_sizes;
  std::vector<std::string> input_dtypes, output_dtypes;
  std::optional<int64_t> time_created_ns;
  std::optional<int64_t> timeout_ms;
  std::string frame;  // the innermost frame outside torch: "file:line in function"; empty: none
};

// A process group's last collective numbers (-1: none).
struct FlightRecorderGroupStatus {
  int64_t last_enqueued = -1;
  int64_t last_started = -1;
  int64_t last_completed = -1;
};

struct FlightRecorderDump {
  std::string version;           // the dump's format version ("2.10")
  std::string comm_lib_version;  // NCCL's ("2.28.9")
  std::vector<FlightRecorderEntry> entries;  // oldest first
  std::map<std::string, FlightRecorderGroupStatus> groups;  // by the group's name
};

// Reads a dump's bytes. Corrupt: not a pickle of the accepted subset, or no dict of entries.
// Nesting deeper than 64 levels, and more than 1 << 22 values, are refused.
Result<FlightRecorderDump> ReadFlightRecorderDump(std::string_view bytes);

// The rank a dump's file name gives ("nccl_trace_rank_3" -> 3, whatever folder), or nullopt.
std::optional<int> FlightRecorderRankOf(std::string_view path);

}  // namespace triage::ingest
