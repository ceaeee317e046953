// ingest_bench: the ingest library alone (framing, decoding, assembly) over one file, one thread.
//
//   ingest_bench FILE [--repeat N] [--no-hash] [--print] [--keep-none]
//
// --keep-none sets IngestOptions::keep_line to a predicate that keeps no line: only multi-line
// events are decoded and assembled, as when the engine's literal prefilter rejects every line;
// it measures framing plus the scan for traceback/block starters (the hash pass is then skipped:
// its events differ from `--events`).
//
// Pass 1 (timed) reads FILE through IngestSource with a sink that only counts events: that is
// the MB/s figure (wall clock), and cpu_MB/s the same over the thread's CPU time, which a busy
// shared host distorts less. Pass 2 (untimed) formats each event with EventToJson and hashes the
// lines, each followed by '\n', with 64-bit FNV-1a, so that the figure can be compared with
// `triage analyze --events FILE` hashed the same way. Peak anonymous memory is sampled from
// /proc/self/status (RssAnon) every 16 MiB of input during pass 1 and at its end; VmHWM would
// include file-backed pages, RssAnon does not.
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "triage/ingest/pipeline.h"

namespace {

uint64_t RssAnonKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("RssAnon:", 0) == 0) return std::strtoull(line.c_str() + 8, nullptr, 10);
  }
  return 0;
}

// CPU time of this thread (user and system), which a shared, busy host inflates far less than
// the wall clock: time spent waiting for a core does not count.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Fnv1a {
  uint64_t h = 14695981039346656037ull;
  void Add(const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(p[i]);
      h *= 1099511628211ull;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ingest_bench FILE [--repeat N] [--no-hash] [--print] [--keep-none]\n");
    return 2;
  }
  std::string path = argv[1];
  int repeat = 1;
  bool hash = true;
  bool print = false;
  bool keep_none = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-hash")) hash = false;
    else if (!std::strcmp(argv[i], "--print")) print = true;
    else if (!std::strcmp(argv[i], "--keep-none")) keep_none = true;
  }
  using triage::ingest::Event;
  triage::ingest::IngestOptions options;
  if (keep_none) {
    options.keep_line = [](std::string_view) { return false; };
    hash = false;
  }

  if (print) {
    auto src = triage::ingest::OpenSource(path);
    if (!src.ok()) {
      std::fprintf(stderr, "ingest_bench: %s\n", src.status().message().c_str());
      return 1;
    }
    std::string name = (*src)->name();
    auto st = triage::ingest::IngestSource(**src, 0, options, [&](Event&& ev) {
      std::string j = triage::ingest::EventToJson(ev, name);
      std::fwrite(j.data(), 1, j.size(), stdout);
      std::fputc('\n', stdout);
    });
    if (!st.ok()) std::fprintf(stderr, "ingest_bench: %s\n", st.message().c_str());
    return st.ok() ? 0 : 1;
  }

  uint64_t peak_anon = RssAnonKiB();
  double best = 1e30;
  double best_cpu = 1e30;
  uint64_t events = 0;
  uint64_t bytes = 0;
  triage::ingest::IngestCounters counters;
  for (int r = 0; r < repeat; ++r) {
    auto src = triage::ingest::OpenSource(path);
    if (!src.ok()) {
      std::fprintf(stderr, "ingest_bench: %s\n", src.status().message().c_str());
      return 1;
    }
    uint64_t n = 0;
    auto t0 = std::chrono::steady_clock::now();
    double c0 = ThreadCpuSeconds();
    auto st = triage::ingest::IngestSource(
        **src, 0, options, [&n](Event&& ev) { n += ev.lines.empty() ? 0 : 1; },
        [&peak_anon](uint64_t) { peak_anon = std::max(peak_anon, RssAnonKiB()); }, &counters);
    auto t1 = std::chrono::steady_clock::now();
    double c1 = ThreadCpuSeconds();
    peak_anon = std::max(peak_anon, RssAnonKiB());
    if (!st.ok()) {
      std::fprintf(stderr, "ingest_bench: %s\n", st.message().c_str());
      return 1;
    }
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    best_cpu = std::min(best_cpu, c1 - c0);
    events = counters.events;
    bytes = counters.bytes;
    if (n != events) {
      std::fprintf(stderr, "ingest_bench: counted %llu events, the stream says %llu\n",
                   static_cast<unsigned long long>(n), static_cast<unsigned long long>(events));
      return 1;
    }
  }
  std::printf("file        %s\n", path.c_str());
  std::printf("bytes       %llu\n", static_cast<unsigned long long>(bytes));
  std::printf("lines       %llu (cut %llu, invalid utf-8 %llu)\n", static_cast<unsigned long long>(counters.lines),
              static_cast<unsigned long long>(counters.cut_lines),
              static_cast<unsigned long long>(counters.invalid_utf8_lines));
  std::printf("events      %llu\n", static_cast<unsigned long long>(events));
  std::printf("seconds     %.3f (best of %d)\n", best, repeat);
  std::printf("MB/s        %.1f\n", static_cast<double>(bytes) / 1e6 / best);
  std::printf("cpu_seconds %.3f (best of %d; user + system of this thread)\n", best_cpu, repeat);
  std::printf("cpu_MB/s    %.1f\n", static_cast<double>(bytes) / 1e6 / best_cpu);
  std::printf("peak_anon   %.1f MiB (RssAnon, sampled every 16 MiB of input)\n", static_cast<double>(peak_anon) / 1024.0);

  if (hash) {
    auto src = triage::ingest::OpenSource(path);
    if (!src.ok()) return 1;
    std::string name = (*src)->name();
    Fnv1a h;
    uint64_t n = 0;
    auto st = triage::ingest::IngestSource(**src, 0, options, [&](Event&& ev) {
      std::string j = triage::ingest::EventToJson(ev, name);
      j.push_back('\n');
      h.Add(j.data(), j.size());
      ++n;
    });
    if (!st.ok()) return 1;
    std::printf("hash_events %llu\n", static_cast<unsigned long long>(n));
    std::printf("fnv1a       %016llx\n", static_cast<unsigned long long>(h.h));
  }
  return 0;
}
