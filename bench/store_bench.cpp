// store_bench: how fast the incident store takes incidents and answers queries at scale.
//
//   store_bench [--incidents N] [--batch N] [--db PATH] [--keep]
//
// Fills a fresh database with N incidents (default 1,000,000) through Store::Record in batches
// (one transaction each), then times recurrences of stored incidents, and `history` and
// `search` as the CLI runs them (the Store calls behind the commands, without process start).
// Prints one "name: value" line per figure.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "triage/core/incident.h"
#include "triage/store/store.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

const char* kCauses[] = {"cuda.oom",           "cuda.toolkit_too_old_for_arch",
                         "nccl.timeout",       "python.import_error",
                         "engine.worker_died", "cuda.illegal_address",
                         "disk.full",          "net.connection_refused"};
const char* kServices[] = {"sglang-server", "vllm-0", "vllm-1", "trtllm", "triton",
                           "ray-head",      "trainer", "tgi",    "lmdeploy", "worker"};

// An incident like the engine's: two root causes with two evidence lines each and a symptom
// with one, distinct captures per incident so each is a new fingerprint.
triage::core::Incident MakeIncident(int64_t n, std::mt19937_64& rng) {
  triage::core::Incident inc;
  inc.service = kServices[n % 10];
  inc.host = "gpu-node-" + std::to_string(n % 97);
  inc.source = "/var/log/" + inc.service + "/" + inc.service + ".log";
  inc.first_line = uint64_t(1000 + n % 50000);
  inc.last_line = inc.first_line + 40;
  // Spread over a year of log time, in order, so `--since` has a range to cut.
  const int64_t t = 1761955200 + n * 31;  // 2025-11-01 + 31 s per incident
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  inc.started = when;
  inc.ended = when;
  const uint64_t pid = rng() % 4000000;
  for (int k = 0; k < 2; ++k) {
    triage::core::Cause c;
    c.cause = kCauses[(n + k * 3) % 8];
    c.rank = k + 1;
    c.score = k == 0 ? 0.91 : 0.52;
    c.band = triage::core::ScoreBand(c.score);
    c.title = std::string("Title of ") + c.cause;
    c.remedy = "Do the thing that fixes " + c.cause;
    c.captures = {{"id", std::to_string(n)}, {"pid", std::to_string(pid)}};
    c.fingerprint_keys = {"id"};
    c.evidence.push_back({inc.source, inc.first_line + uint64_t(k),
                          "[rank" + std::to_string(k) + " pid=" + std::to_string(pid) +
                              "] RuntimeError: CUDA error: out of memory while allocating " +
                              std::to_string(rng() % 80000) + " MiB (request " +
                              std::to_string(n) + ")"});
    c.evidence.push_back({inc.source, inc.first_line + 5 + uint64_t(k),
                          "File \"/opt/app/model_runner.py\", line " +
                              std::to_string(100 + rng() % 900) + ", in forward_step" +
                              std::to_string(n % 1000)});
    if (k == 0) {
      c.symptoms.push_back({"engine.worker_died", "A worker died",
                            {{inc.source, inc.last_line,
                              "EngineCore pid=" + std::to_string(pid) + " exited with code 1"}}});
    }
    inc.causes.push_back(std::move(c));
  }
  inc.fingerprint = triage::core::Fingerprint(inc);
  return inc;
}

struct Latency {
  double median_ms = 0, p95_ms = 0;
  size_t rows = 0;
};

Latency Time(int reps, const std::function<size_t()>& query) {
  std::vector<double> ms;
  size_t rows = 0;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    rows = query();
    ms.push_back(Seconds(Clock::now() - t0) * 1000);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 95 / 100)], rows};
}

void Report(const char* name, const Latency& l) {
  std::printf("%-44s median %8.3f ms  p95 %8.3f ms  (%zu rows)\n", name, l.median_ms, l.p95_ms,
              l.rows);
}

int Fail(const std::string& what, const triage::Status& s) {
  std::fprintf(stderr, "store_bench: %s: %s\n", what.c_str(), s.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t total = 1000000;
  int64_t batch_size = 10000;
  std::string db;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--incidents" && i + 1 < argc) total = std::atoll(argv[++i]);
    else if (a == "--batch" && i + 1 < argc) batch_size = std::atoll(argv[++i]);
    else if (a == "--db" && i + 1 < argc) db = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: store_bench [--incidents N] [--batch N] [--db PATH] [--keep]\n");
      return 2;
    }
  }
  if (db.empty()) {
    db = (std::filesystem::temp_directory_path() / ("store_bench-" + std::to_string(getpid()) +
                                                    ".db"))
             .string();
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);

  auto opened = triage::store::Store::Open(db);
  if (!opened.ok()) return Fail("open", opened.status());
  triage::store::Store store = std::move(opened).value();
  std::mt19937_64 rng(42);

  // Fill.
  int64_t evidence_rows = 0;
  double record_seconds = 0;
  for (int64_t done = 0; done < total;) {
    std::vector<triage::core::Incident> batch;
    const int64_t n = std::min(batch_size, total - done);
    for (int64_t i = 0; i < n; ++i) batch.push_back(MakeIncident(done + i, rng));
    auto t0 = Clock::now();
    auto r = store.Record(batch);
    record_seconds += Seconds(Clock::now() - t0);
    if (!r.ok()) return Fail("record", r.status());
    evidence_rows += r->evidence_rows;
    done += n;
  }
  std::printf("incidents stored:                            %lld in %.1f s\n",
              static_cast<long long>(total), record_seconds);
  std::printf("new incidents/s:                             %.0f\n", double(total) / record_seconds);
  std::printf("evidence rows/s:                             %.0f\n",
              double(evidence_rows) / record_seconds);

  // Recurrences: stored fingerprints seen again (update, replace the latest evidence).
  {
    const int64_t reps = std::min<int64_t>(total, 100000);
    std::vector<triage::core::Incident> batch;
    int64_t rows = 0;
    double seconds = 0;
    for (int64_t i = 0; i < reps; ++i) {
      auto inc = MakeIncident(int64_t(rng() % uint64_t(total)), rng);
      inc.started = "2026-11-01T00:00:00";
      batch.push_back(std::move(inc));
      if (int64_t(batch.size()) == batch_size || i + 1 == reps) {
        auto t0 = Clock::now();
        auto r = store.Record(batch);
        seconds += Seconds(Clock::now() - t0);
        if (!r.ok()) return Fail("record recurrences", r.status());
        rows += r->evidence_rows;
        batch.clear();
      }
    }
    std::printf("recurrences/s:                               %.0f (%lld, %.0f evidence rows/s)\n",
                double(reps) / seconds, static_cast<long long>(reps), double(rows) / seconds);
  }

  std::error_code ec;
  std::printf("database size:                               %.0f MiB (+ %.0f MiB WAL)\n",
              double(std::filesystem::file_size(db, ec)) / (1 << 20),
              double(std::filesystem::file_size(db + "-wal", ec)) / (1 << 20));

  // Queries, each from a fresh connection's first call and then warm.
  {
    auto t0 = Clock::now();
    auto again = triage::store::Store::Open(db);
    if (!again.ok()) return Fail("reopen", again.status());
    std::printf("open (existing, %lld incidents):            %.3f ms\n",
                static_cast<long long>(total), Seconds(Clock::now() - t0) * 1000);
  }
  constexpr int kReps = 30;
  auto history = [&](triage::store::HistoryFilter f) {
    return [&store, f]() -> size_t {
      auto r = store.History(f);
      return r.ok() ? r->size() : 0;
    };
  };
  triage::store::HistoryFilter f;
  Report("history (newest 50)", Time(kReps, history(f)));
  f.service = "trtllm";
  Report("history --service trtllm", Time(kReps, history(f)));
  f = {};
  f.cause = "nccl.timeout";
  Report("history --cause nccl.timeout", Time(kReps, history(f)));
  f = {};
  f.cause = "nccl";
  Report("history --cause nccl (prefix)", Time(kReps, history(f)));
  f = {};
  f.since = "2026-06-01T00:00:00";
  f.limit = 0;
  Report("history --since (1 month, no limit)", Time(5, history(f)));
  f = {};
  f.service = "worker";
  f.cause = "disk.full";
  Report("history --service worker --cause disk.full", Time(kReps, history(f)));

  auto search = [&](std::string text) {
    return [&store, text]() -> size_t {
      auto r = store.Search(text, 50);
      return r.ok() ? r->size() : 0;
    };
  };
  Report("search 'out of memory' (every incident)", Time(kReps, search("out of memory")));
  Report("search 'forward_step417' (1 in 1000)", Time(kReps, search("forward_step417")));
  Report("search '(request 123457)' (one incident)", Time(kReps, search("(request 123457)")));
  Report("search 'no such words here' (none)", Time(kReps, search("no such words here")));
  Report("search '\"AND\" NOT (' (operators, literal)", Time(kReps, search("\"AND\" NOT (")));

  auto stats_t0 = Clock::now();
  auto stats = store.GetStats();
  if (!stats.ok()) return Fail("stats", stats.status());
  std::printf("stats:                                       %.0f ms\n",
              Seconds(Clock::now() - stats_t0) * 1000);
  auto show = Time(kReps, [&]() -> size_t {
    auto r = store.GetIncident(int64_t(rng() % uint64_t(total)) + 1);
    return r.ok() ? r->incident.causes.size() : 0;
  });
  Report("show ID", show);

  if (!keep) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix, ec);
  } else {
    std::printf("kept: %s\n", db.c_str());
  }
  return 0;
}
