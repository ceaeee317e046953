// PyTorch's NCCL Flight Recorder dumps (flight_recorder.h): the pickle read as data (pickle.h),
// then the keys the recorder writes ("version", "comm_lib_version", "pg_config", "pg_status" and
// "entries", as in the dumps of tests/data/jobs) taken into plain structs. Fields that are
// missing or of another type are left at their defaults.
#include "triage/ingest/flight_recorder.h"

#include "pickle.h"

namespace triage::ingest {

namespace {

using detail::PickleValue;
using Kind = PickleValue::Kind;

std::string Str(const PickleValue* v) { return v && v->kind == Kind::kString ? v->s : std::string(); }

std::optional<int64_t> Int(const PickleValue* v) {
  if (v && v->kind == Kind::kInt) return v->i;
  return std::nullopt;
}

// A list of int lists ([[1024, 1024]]); the recorder writes sizes so.
std::vector<std::vector<int64_t>> Sizes(const PickleValue* v) {
  std::vector<std::vector<int64_t>> out;
  if (!v || v->kind != Kind::kList) return out;
  for (const PickleValue* shape : v->items) {
    auto& dims = out.emplace_back();
    if (shape && shape->kind == Kind::kList)
      for (const PickleValue* d : shape->items)
        if (auto i = Int(d)) dims.push_back(*i);
  }
  return out;
}

std::vector<std::string> Strings(const PickleValue* v) {
  std::vector<std::string> out;
  if (v && v->kind == Kind::kList)
    for (const PickleValue* s : v->items) out.push_back(Str(s));
  return out;
}

// The innermost frame that is not PyTorch's own (the program's call of the collective).
std::string ProgramFrame(const PickleValue* frames) {
  if (!frames || frames->kind != Kind::kList) return "";
  for (const PickleValue* f : frames->items) {
    if (!f || f->kind != Kind::kDict) continue;
    const std::string file = Str(f->Get("filename"));
    if (file.empty() || file.find("/torch/") != std::string::npos) continue;
    const auto line = Int(f->Get("line"));
    return file + ":" + (line ? std::to_string(*line) : "?") + " in " + Str(f->Get("name"));
  }
  return "";
}

FlightRecorderEntry Entry(const PickleValue& e) {
  FlightRecorderEntry out;
  out.record_id = Int(e.Get("record_id")).value_or(-1);
  out.collective_seq_id = Int(e.Get("collective_seq_id")).value_or(-1);
  out.p2p_seq_id = Int(e.Get("p2p_seq_id")).value_or(-1);
  const PickleValue* p2p = e.Get("is_p2p");
  out.is_p2p = p2p && p2p->kind == Kind::kBool && p2p->b;
  // ("0", "default_pg"): the group's name, then its description.
  if (const PickleValue* pg = e.Get("process_group"); pg && pg->kind == Kind::kTuple && !pg->items.empty())
    out.process_group = Str(pg->items[0]);
  out.profiling_name = Str(e.Get("profiling_name"));
  out.state = Str(e.Get("state"));
  out.input_sizes = Sizes(e.Get("input_sizes"));
  out.output_sizes = Sizes(e.Get("output_sizes"));
  out.input_dtypes = Strings(e.Get("input_dtypes"));
  out.output_dtypes = Strings(e.Get("output_dtypes"));
  out.time_created_ns = Int(e.Get("time_created_ns"));
  out.timeout_ms = Int(e.Get("timeout_ms"));
  out.frame = ProgramFrame(e.Get("frames"));
  return out;
}

}  // namespace

Result<FlightRecorderDump> ReadFlightRecorderDump(std::string_view bytes) {
  auto pickle = detail::ReadPickle(bytes);
  if (!pickle.ok()) return pickle.status();
  const PickleValue* root = pickle->root;
  if (!root || root->kind != Kind::kDict) return Status::Corrupt("a Flight Recorder dump is a dict");
  const PickleValue* entries = root->Get("entries");
  if (!entries || entries->kind != Kind::kList)
    return Status::Corrupt("a Flight Recorder dump without a list of entries");
  FlightRecorderDump dump;
  dump.version = Str(root->Get("version"));
  dump.comm_lib_version = Str(root->Get("comm_lib_version"));
  for (const PickleValue* e : entries->items)
    if (e && e->kind == Kind::kDict) dump.entries.push_back(Entry(*e));
  if (const PickleValue* status = root->Get("pg_status"); status && status->kind == Kind::kDict) {
    for (const auto& [name, st] : status->dict) {
      if (!name || name->kind != Kind::kString || !st || st->kind != Kind::kDict) continue;
      FlightRecorderGroupStatus g;
      g.last_enqueued = Int(st->Get("last_enqueued_collective")).value_or(-1);
      g.last_started = Int(st->Get("last_started_collective")).value_or(-1);
      g.last_completed = Int(st->Get("last_completed_collective")).value_or(-1);
      dump.groups[name->s] = g;
    }
  }
  return dump;
}

std::optional<int> FlightRecorderRankOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t at = name.rfind("rank_");
  if (at == std::string_view::npos) return std::nullopt;
  name.remove_prefix(at + 5);
  if (name.empty() || name.size() > 9) return std::nullopt;
  int rank = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

}  // namespace triage::ingest
