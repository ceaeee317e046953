// Shared helpers of the verifier tests: temporary folders and running a check as another user.
#pragma once

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "triage/verifiers/verifier.h"

namespace triage::verifiers::testing {

// A fresh folder, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "triage-verify-XXXXXX").string();
    char* p = ::mkdtemp(pattern.data());
    if (p) path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0644) const {
    std::string p = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }

 private:
  std::string path_;
};

inline std::string FixtureDir(const std::string& name) { return std::string(TRIAGE_FIXTURES) + "/" + name; }

// Runs a check in a child process that has dropped to the user nobody (65534): a genuine
// permission problem for a test that itself runs as root.
struct AsNobody {
  bool ran = false;
  core::Verdict verdict = core::Verdict::kInconclusive;
  std::string reason;
};
inline AsNobody CheckAsNobody(const Verifier& verifier, const VerifyConfig& config, const Hypothesis& h) {
  AsNobody out;
  int fds[2];
  if (::pipe(fds) != 0) return out;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    Finding f = verifier.Check(config, h);
    std::string msg = std::to_string(static_cast<int>(f.verdict)) + "\n" + f.reason;
    if (::write(fds[1], msg.data(), msg.size()) < 0) ::_exit(4);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string data;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return out;
  size_t nl = data.find('\n');
  if (nl == std::string::npos) return out;
  out.ran = true;
  out.verdict = static_cast<core::Verdict>(std::atoi(data.substr(0, nl).c_str()));
  out.reason = data.substr(nl + 1);
  return out;
}

inline bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace triage::verifiers::testing
