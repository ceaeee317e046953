// Shared by the store's tests: temporary folders, incidents built like the engine builds them,
// and running the triage binary.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "triage/core/incident.h"

namespace triage::store::testing {

// A fresh folder under $TMPDIR, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "triage-store-XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    path_ = p ? p : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An incident as the engine makes one for "a CUDA toolkit too old for this GPU": the cause's
// defining captures are `sm` and `required`; pid and paths vary between runs of the same failure.
inline core::Incident ToolkitTooOld(const std::string& service, const std::string& sm,
                                    const std::string& source, int pid,
                                    const std::optional<std::string>& started) {
  core::Incident inc;
  inc.service = service;
  inc.host = "ct200";
  inc.source = source;
  inc.first_line = 10 + uint64_t(pid % 7);
  inc.last_line = inc.first_line + 30;
  inc.started = started;
  inc.ended = started;
  core::Cause c;
  c.cause = "cuda.toolkit_too_old_for_arch";
  c.rank = 1;
  c.score = 0.93;
  c.band = "likely";
  c.title = "The CUDA toolkit is too old for this GPU";
  c.remedy = "Install CUDA 12.9 or newer";
  c.captures = {{"sm", sm}, {"required", "12.9"}, {"pid", std::to_string(pid)}};
  c.fingerprint_keys = {"sm", "required"};
  c.evidence = {{source, inc.first_line, "[pid " + std::to_string(pid) +
                                             "] RuntimeError: CUDA error: no kernel image is "
                                             "available for execution on the device (sm_" +
                                             sm + ")"},
                {source, inc.first_line + 2, "nvcc 12.4 does not support sm_" + sm}};
  c.symptoms = {{"lib.arch_unsupported", "A library has no kernels for this architecture",
                 {{source, inc.first_line + 5, "flashinfer: unsupported arch " + sm}}}};
  c.verify = {{"cuda.toolkits", {{"required", "12.9"}}}};
  inc.causes.push_back(c);
  core::Cause oom;
  oom.cause = "engine.worker_died";
  oom.rank = 2;
  oom.score = 0.41;
  oom.band = "possible";
  oom.title = "A worker process died";
  oom.remedy = "See the root cause";
  oom.captures = {{"worker", "EngineCore"}};
  oom.fingerprint_keys = {};
  oom.independent = false;
  oom.evidence = {{source, inc.last_line, "EngineCore pid=" + std::to_string(pid) + " died"}};
  inc.causes.push_back(oom);
  inc.fingerprint = core::Fingerprint(inc);
  return inc;
}

// A small, complete incident numbered `n`, for volume (crash, kill, concurrency, benchmark).
inline core::Incident Numbered(int64_t n, int causes = 2, int evidence_per_cause = 2) {
  core::Incident inc;
  inc.service = "svc" + std::to_string(n % 50);
  inc.host = "host" + std::to_string(n % 7);
  inc.source = "/var/log/" + inc.service + ".log";
  inc.first_line = uint64_t(n);
  inc.last_line = uint64_t(n) + 10;
  for (int k = 0; k < causes; ++k) {
    core::Cause c;
    c.cause = "test.cause" + std::to_string(k);
    c.rank = k + 1;
    c.score = 0.9 - 0.1 * k;
    c.band = core::ScoreBand(c.score);
    c.title = "Cause " + std::to_string(k);
    c.captures = {{"n", std::to_string(n)}};
    c.fingerprint_keys = {"n"};
    for (int e = 0; e < evidence_per_cause; ++e) {
      c.evidence.push_back({inc.source, uint64_t(n + e),
                            "incident" + std::to_string(n) + " cause" + std::to_string(k) +
                                " line" + std::to_string(e) + " CUDA error: out of memory"});
    }
    inc.causes.push_back(std::move(c));
  }
  inc.fingerprint = core::Fingerprint(inc);
  return inc;
}

struct ProcessResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path), waits, and returns its exit code and output. `in_child` runs in
// the child before exec (to set limits).
inline ProcessResult Run(const std::vector<std::string>& argv, void (*in_child)() = nullptr) {
  ProcessResult r;
  char out_tmpl[] = "/tmp/triage-run-out-XXXXXX";
  char err_tmpl[] = "/tmp/triage-run-err-XXXXXX";
  int out_fd = mkstemp(out_tmpl);
  int err_fd = mkstemp(err_tmpl);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (in_child) in_child();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  auto slurp = [](const char* path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  r.out = slurp(out_tmpl);
  r.err = slurp(err_tmpl);
  close(out_fd);
  close(err_fd);
  unlink(out_tmpl);
  unlink(err_tmpl);
  return r;
}

inline size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos;
       p = haystack.find(needle, p + needle.size()))
    ++n;
  return n;
}

// One integer from `sql` on the database at `path`, read through a read-only connection of its
// own (not the Store under test); -1 when the query gives no row.
inline int64_t QueryInt(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

}  // namespace triage::store::testing
