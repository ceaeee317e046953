// Loopback servers and clients for the tests of the daemon's metrics and notifications: a free
// port, a plain HTTP GET, an HTTP receiver that records what is POSTed to it, programs found on
// PATH and run as children that are always stopped (also when a test fails); the crash those
// tests write and the port a daemon serves its metrics on.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_harness.h"

namespace triage::daemon::testing {

// A PyTorch CUDA OOM that ends a training script.
inline std::string CudaOomCrash() {
  return "2026-11-02 09:24:00 INFO step 100 loss=0.42\n"
         "Traceback (most recent call last):\n"
         "  File \"/app/train.py\", line 88, in <module>\n"
         "    loss = model(batch)\n"
         "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1553, in "
         "_call_impl\n"
         "    return forward_call(*args, **kwargs)\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
         "total capacity of 79.15 GiB of which 1.02 GiB is free.\n";
}

inline std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The port a `watch --metrics 127.0.0.1:...` logged it serves on; -1 when it did not within 10 s.
inline int MetricsPort(const WatchProcess& w) {
  const std::string key = "event=metrics.listen address=127.0.0.1:";
  int port = -1;
  WaitUntil(
      [&] {
        const std::string log = w.Log();
        const size_t k = log.find(key);
        if (k != std::string::npos) port = std::atoi(log.c_str() + k + key.size());
        return port > 0;
      },
      std::chrono::seconds(10));
  return port;
}

// A port on 127.0.0.1 that nothing listens on now (the kernel's pick, released).
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = -1;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

inline int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

struct HttpAnswer {
  int status = 0;  // 0: no answer
  std::string headers;
  std::string body;
};

// GET http://127.0.0.1:port/target, HTTP/1.0 (the server closes after answering).
inline HttpAnswer HttpGet(int port, const std::string& target) {
  HttpAnswer out;
  int fd = ConnectLoopback(port);
  if (fd < 0) return out;
  std::string req = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return out;
  }
  std::string all;
  char buf[4096];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t end = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return out;
  out.status = std::atoi(all.c_str() + 9);
  out.headers = all.substr(0, end);
  out.body = all.substr(end + 4);
  return out;
}

// The value of one series (its name and labels exactly as exposed) in a text exposition; -1
// when it is absent.
inline double SampleValue(const std::string& exposition, const std::string& series) {
  const std::string key = series + " ";
  for (size_t k = exposition.find(key); k != std::string::npos; k = exposition.find(key, k + 1))
    if (k == 0 || exposition[k - 1] == '\n') return std::atof(exposition.c_str() + k + key.size());
  return -1;
}

// Percent-encodes a query value.
inline std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02X", c);
      out += b;
    }
  }
  return out;
}

// One request as a receiver got it.
struct ReceivedRequest {
  std::string method, target, headers, body;
};

// An HTTP server on 127.0.0.1 (a port of the kernel's pick) that records every request and
// answers `status` (or, with `answer` false, reads and never answers). Stopped and joined by its
// destructor.
class HttpReceiver {
 public:
  explicit HttpReceiver(int status = 200, bool answer = true) : status_(status), answer_(answer) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(listen_fd_, 16) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HttpReceiver() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) close(listen_fd_);
    for (int fd : held_) close(fd);
  }
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  int port() const { return port_; }
  std::vector<ReceivedRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ReceivedRequest r;
      if (Read(fd, r)) {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(r);
      }
      if (!answer_) {
        held_.push_back(fd);  // never answered; closed at the end
        continue;
      }
      std::string reply = "HTTP/1.1 " + std::to_string(status_) +
                          " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      close(fd);
    }
  }
  static bool Read(int fd, ReceivedRequest& r) {
    std::string all;
    char buf[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      all.append(buf, static_cast<size_t>(n));
      size_t end = all.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      r.headers = all.substr(0, end);
      std::istringstream first(r.headers);
      first >> r.method >> r.target;
      size_t length = 0;
      for (const char* key : {"Content-Length: ", "content-length: "}) {
        size_t k = r.headers.find(key);
        if (k != std::string::npos) length = std::strtoul(r.headers.c_str() + k + 16, nullptr, 10);
      }
      if (all.size() - end - 4 >= length) {
        r.body = all.substr(end + 4, length);
        return true;
      }
    }
    return false;
  }

  int status_;
  bool answer_;
  int listen_fd_ = -1;
  int port_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<ReceivedRequest> requests_;
  std::vector<int> held_;
  std::thread thread_;
};

// The program's path on PATH, empty when it is not installed.
inline std::string FindProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string p = dir + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// A program run as a child, stdin from `stdin_path` (or /dev/null), stdout and stderr to
// `output`; killed (TERM, then KILL) and reaped when the object goes.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::filesystem::path& output,
        const std::filesystem::path& stdin_path = "/dev/null") {
    pid_ = fork();
    if (pid_ != 0) return;
    int in = open(stdin_path.c_str(), O_RDONLY);
    int out = open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) dup2(in, 0);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  ~Child() { Stop(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Waits for the child to exit on its own; its exit status, -1 past the timeout (then killed).
  int Wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Stop();
    return -1;
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 300; ++i) {
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &st, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

// The process is gone (or a zombie nobody reaped yet: it runs no more either).
inline bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         line[close_paren + 2] == 'Z';
}

}  // namespace triage::daemon::testing
