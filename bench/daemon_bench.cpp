// The load side of bench/daemon.sh: writes log files into a folder a `triage watch` follows and
// measures what the daemon makes of them through its store (what `triage history` reads).
//
//   daemon_bench latency --dir D --db DB [--kind fatal|traceback|segfault] [--count N]
//                        [--gap-ms MS]
//       Appends a crash (by default a fatal line: a kernel OOM kill) to one of ten files, N
//       times, and measures the time from the write returning to the new occurrence being
//       visible in the store.
//   daemon_bench load --dir D --db DB --source FILE [--seconds S] [--mbps R] [--files F]
//                     [--rotate-mb M]
//       Appends lines of FILE across F files at R MB/s for S seconds; a file that reaches M MB
//       is rotated as logrotate does (app.log.1 deleted, app.log renamed to app.log.1, a new
//       app.log). Then waits until the daemon's heartbeat shows every byte read.
// Prints `key=value` lines for the script.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "triage/store/store.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> ParseFlags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  return flags;
}

std::string Flag(const std::map<std::string, std::string>& f, const std::string& k,
                 const std::string& def) {
  auto it = f.find(k);
  return it == f.end() ? def : it->second;
}

int64_t Occurrences(triage::store::Store& db) {
  auto s = db.GetStats();
  return s.ok() ? s->occurrences : -1;
}

int64_t HeartbeatBytes(triage::store::Store& db) {
  auto hb = db.GetHeartbeat();
  if (!hb.ok() || !*hb) return -1;
  auto it = (*hb)->counters.find("bytes");
  return it == (*hb)->counters.end() ? -1 : it->second;
}

bool WriteAll(const fs::path& path, const std::string& data) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = write(fd, data.data() + off, data.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  close(fd);
  return off == data.size();
}

std::optional<triage::store::Store> OpenDb(const std::string& path) {
  triage::store::StoreOptions o;
  o.create = false;
  for (int i = 0; i < 200; ++i) {
    auto s = triage::store::Store::Open(path, o);
    if (s.ok()) return std::move(s).value();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

// The `i`th crash of a kind, after a line of the service at work. fatal: a kernel OOM-kill line;
// traceback: a request handler's Python traceback that ends the file (no fatal line: stored once
// the file is quiet for the traceback settle time); segfault: CPython's faulthandler dump, whose
// fatal line is inside a block nothing closes (stored once the block is flushed, after the
// traceback settle time). Empty for an unknown kind.
std::string CrashText(const std::string& kind, int i) {
  const std::string n = std::to_string(i);
  const std::string at_work = "2026-11-02 09:24:01 INFO request " + n + " done\n";
  if (kind == "fatal")
    return at_work + "Nov  2 09:24:02 gpu-node-07 kernel: Out of memory: Killed process " +
           std::to_string(20000 + i) +
           " (python) total-vm:81234567kB, anon-rss:62345678kB, file-rss:0kB\n";
  if (kind == "traceback")
    return at_work +
           "2026-11-02 09:24:02 ERROR Exception in worker\n"
           "Traceback (most recent call last):\n"
           "  File \"/app/worker.py\", line 88, in handle\n"
           "    out = run(job)\n"
           "KeyError: 'job-" + n + "'\n";
  if (kind == "segfault")
    return at_work +
           "Fatal Python error: Segmentation fault\n"
           "\n"
           "Current thread 0x00007f3b2c1ff740 (most recent call first):\n"
           "  File \"/app/worker.py\", line " + std::to_string(100 + i) + " in handle\n"
           "  File \"/app/worker.py\", line 20 in <module>\n"
           "\n"
           "Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)\n";
  return {};
}

int Latency(const std::map<std::string, std::string>& f) {
  fs::path dir = Flag(f, "--dir", "");
  int count = std::atoi(Flag(f, "--count", "200").c_str());
  int gap_ms = std::atoi(Flag(f, "--gap-ms", "30").c_str());
  const std::string kind = Flag(f, "--kind", "fatal");
  if (CrashText(kind, 0).empty()) {
    std::fprintf(stderr, "daemon_bench: unknown --kind %s\n", kind.c_str());
    return 2;
  }
  auto db = OpenDb(Flag(f, "--db", ""));
  if (!db) {
    std::fprintf(stderr, "daemon_bench: cannot open the database\n");
    return 2;
  }
  std::vector<double> ms;
  int64_t seen = Occurrences(*db);
  int timeouts = 0;
  for (int i = 0; i < count; ++i) {
    fs::path file = dir / ("svc-" + std::to_string(i % 10) + ".log");
    if (!WriteAll(file, CrashText(kind, i))) return 2;
    auto start = Clock::now();
    auto deadline = start + std::chrono::seconds(10);
    int64_t now_seen = seen;
    while ((now_seen = Occurrences(*db)) <= seen && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    auto end = Clock::now();
    if (now_seen <= seen) {
      ++timeouts;
    } else {
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    seen = now_seen;
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    if (ms.empty()) return -1.0;
    size_t k = static_cast<size_t>(p * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[std::min(k, ms.size() - 1)];
  };
  const std::string prefix = kind == "fatal" ? "" : kind + "_";
  const char* k = prefix.c_str();
  std::printf("%slatency_samples=%zu\n%slatency_timeouts=%d\n%slatency_p50_ms=%.1f\n"
              "%slatency_p90_ms=%.1f\n%slatency_p99_ms=%.1f\n%slatency_max_ms=%.1f\n",
              k, ms.size(), k, timeouts, k, pct(0.50), k, pct(0.90), k, pct(0.99), k,
              ms.empty() ? -1.0 : ms.back());
  return timeouts == 0 ? 0 : 1;
}

// A service that fails without pause: --rate failures a second (a traceback ending in a CUDA
// OOM, then the launcher's exit line) into one file for --seconds; the daemon's (--pid) RSS is
// sampled each second. Prints its first and peak RSS.
double RssMib(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  return -1;
}

int Storm(const std::map<std::string, std::string>& f) {
  fs::path file = fs::path(Flag(f, "--dir", "")) / "storm.log";
  double seconds = std::atof(Flag(f, "--seconds", "600").c_str());
  int rate = std::atoi(Flag(f, "--rate", "100").c_str());
  std::string pid = Flag(f, "--pid", "");
  auto start = Clock::now();
  double first = RssMib(pid), peak = first;
  int64_t n = 0;
  auto next_sample = start + std::chrono::seconds(1);
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    std::string b;
    for (int i = 0; i < rate / 10; ++i, ++n)
      b += "[rank" + std::to_string(n % 8) + "]: Traceback (most recent call last):\n[rank" +
           std::to_string(n % 8) + "]:   File \"/app/train.py\", line 9, in <module>\n[rank" +
           std::to_string(n % 8) + "]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
           "allocate 2.00 GiB (failure " + std::to_string(n) + ")\n";
    if (!WriteAll(file, b)) return 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (Clock::now() >= next_sample) {
      peak = std::max(peak, RssMib(pid));
      next_sample += std::chrono::seconds(1);
    }
  }
  peak = std::max(peak, RssMib(pid));
  std::printf("storm_failures=%lld\nstorm_rss_start_mib=%.1f\nstorm_rss_peak_mib=%.1f\n",
              static_cast<long long>(n), first, peak);
  return peak < 64 ? 0 : 1;
}

int Load(const std::map<std::string, std::string>& f) {
  fs::path dir = Flag(f, "--dir", "");
  double seconds = std::atof(Flag(f, "--seconds", "60").c_str());
  double mbps = std::atof(Flag(f, "--mbps", "50").c_str());
  int files = std::atoi(Flag(f, "--files", "50").c_str());
  uint64_t rotate = static_cast<uint64_t>(std::atof(Flag(f, "--rotate-mb", "16").c_str()) * 1e6);
  std::ifstream in(Flag(f, "--source", ""), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string source = ss.str();
  if (source.empty()) {
    std::fprintf(stderr, "daemon_bench: empty --source\n");
    return 2;
  }
  auto db = OpenDb(Flag(f, "--db", ""));
  if (!db) return 2;
  int64_t bytes_before = std::max<int64_t>(0, HeartbeatBytes(*db));

  // Chunks of whole lines of about 64 KiB, taken round robin from the source.
  std::vector<std::string> chunks;
  for (size_t pos = 0; pos < source.size();) {
    size_t end = std::min(source.size(), pos + (64 << 10));
    size_t nl = source.rfind('\n', end - 1);
    if (nl == std::string::npos || nl < pos) nl = end - 1;
    chunks.push_back(source.substr(pos, nl + 1 - pos));
    pos = nl + 1;
  }
  std::vector<uint64_t> sizes(static_cast<size_t>(files), 0);
  uint64_t written = 0, rotations = 0;
  size_t next_chunk = 0;
  const double rate = mbps * 1e6;
  auto start = Clock::now();
  for (int k = 0;; ++k) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= seconds) break;
    // Keep to the rate: write when behind, sleep when ahead.
    if (static_cast<double>(written) > rate * elapsed) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    size_t i = static_cast<size_t>(k % files);
    fs::path live = dir / ("svc-" + std::to_string(i) + ".log");
    if (sizes[i] >= rotate) {
      std::error_code ec;
      fs::remove(dir / ("svc-" + std::to_string(i) + ".log.1"), ec);
      fs::rename(live, dir / ("svc-" + std::to_string(i) + ".log.1"), ec);
      sizes[i] = 0;
      ++rotations;
    }
    const std::string& c = chunks[next_chunk++ % chunks.size()];
    if (!WriteAll(live, c)) return 2;
    sizes[i] += c.size();
    written += c.size();
  }
  double wrote_s = std::chrono::duration<double>(Clock::now() - start).count();
  // The daemon has kept up when its read counter reaches what was written.
  auto deadline = Clock::now() + std::chrono::seconds(120);
  int64_t read = 0;
  while ((read = HeartbeatBytes(*db) - bytes_before) < static_cast<int64_t>(written) &&
         Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  double caught_up_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("load_written_bytes=%llu\nload_write_seconds=%.1f\nload_write_mbps=%.1f\n"
              "load_rotations=%llu\nload_read_bytes=%lld\nload_caught_up_seconds=%.1f\n"
              "load_lag_seconds=%.1f\nload_read_mbps=%.1f\n",
              static_cast<unsigned long long>(written), wrote_s, written / wrote_s / 1e6,
              static_cast<unsigned long long>(rotations), static_cast<long long>(read),
              caught_up_s, caught_up_s - wrote_s, static_cast<double>(read) / caught_up_s / 1e6);
  return read >= static_cast<int64_t>(written) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: daemon_bench latency|load --dir D --db DB [...]\n");
    return 2;
  }
  auto flags = ParseFlags(argc, argv);
  std::string mode = argv[1];
  if (mode == "latency") return Latency(flags);
  if (mode == "storm") return Storm(flags);
  if (mode == "load") return Load(flags);
  std::fprintf(stderr, "daemon_bench: unknown mode %s\n", mode.c_str());
  return 2;
}
