// net.port: which process holds a TCP port: the listening sockets of /proc/net/tcp and tcp6,
// matched to processes through the socket inodes of /proc/*/fd. Verdict for net.port_in_use:
// confirmed while something holds the port; a free port now is `not_reproduced` (the holder may
// have exited since). Another user's /proc/PID/fd that cannot be read is named as a permission
// gap. A port the log does not name is never shown as if it had: "the log names no port".
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "common.h"

namespace triage::verifiers {

namespace {

struct Socket {
  std::string family;
  std::string local;
  std::string state;
  unsigned long inode = 0;
};

const char* TcpState(int s) {
  switch (s) {
    case 0x0A: return "LISTEN";
    case 0x01: return "ESTABLISHED";
    case 0x06: return "TIME_WAIT";
    default: return "OTHER";
  }
}

std::vector<Socket> SocketsOnPort(unsigned port) {
  std::vector<Socket> out;
  for (const char* family : {"tcp", "tcp6"}) {
    auto text = ReadSmallFile(std::string("/proc/net/") + family, 64u << 20);
    if (!text) continue;
    auto lines = SplitLines(*text);
    for (size_t i = 1; i < lines.size(); ++i) {
      char local[128], remote[128];
      unsigned state = 0;
      unsigned long inode = 0;
      // sl local rem st tx:rx tr:tm retrnsmt uid timeout inode
      if (std::sscanf(lines[i].c_str(), "%*s %127s %127s %x %*s %*s %*s %*u %*u %lu", local, remote,
                      &state, &inode) != 4)
        continue;
      const char* colon = std::strrchr(local, ':');
      if (!colon) continue;
      unsigned p = static_cast<unsigned>(std::strtoul(colon + 1, nullptr, 16));
      if (p != port) continue;
      if (state != 0x0A && state != 0x01) continue;  // who holds it: listeners and bound peers
      out.push_back({family, local, TcpState(state), inode});
    }
  }
  return out;
}

class NetPort final : public Verifier {
 public:
  std::string_view name() const override { return "net.port"; }
  bool host_check() const override { return false; }  // it needs a port from a log

  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    std::string port_text = h.Arg("port");
    char* end = nullptr;
    unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
    if (port_text.empty() || *end || port == 0 || port > 65535)
      return Finding::Inconclusive(port_text.empty() ? "the log names no port"
                                                     : "the log names no port (no TCP port number where "
                                                       "the rule looks for one)");
    auto sockets = SocketsOnPort(static_cast<unsigned>(port));
    std::set<unsigned long> listen_inodes;
    for (const auto& s : sockets)
      if (s.state == std::string("LISTEN")) listen_inodes.insert(s.inode);

    struct Holder {
      long pid;
      std::string name;
    };
    std::vector<Holder> holders;
    std::vector<std::string> refused;
    if (!listen_inodes.empty()) {
      DIR* proc = ::opendir("/proc");
      while (proc) {
        dirent* e = ::readdir(proc);
        if (!e) break;
        char* pend = nullptr;
        long pid = std::strtol(e->d_name, &pend, 10);
        if (*pend || pid <= 0) continue;
        std::string fd_dir = "/proc/" + std::string(e->d_name) + "/fd";
        DIR* fds = ::opendir(fd_dir.c_str());
        if (!fds) {
          if (errno == EACCES || errno == EPERM) refused.push_back(fd_dir);
          continue;
        }
        bool found = false;
        while (dirent* f = ::readdir(fds)) {
          char target[128];
          std::string link = fd_dir + "/" + f->d_name;
          ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
          if (n <= 0) continue;
          target[n] = 0;
          unsigned long inode = 0;
          if (std::sscanf(target, "socket:[%lu]", &inode) == 1 && listen_inodes.count(inode)) found = true;
        }
        ::closedir(fds);
        if (found) {
          auto comm = ReadSmallFile("/proc/" + std::string(e->d_name) + "/comm", 256);
          holders.push_back({pid, comm ? Trim(*comm) : "?"});
        }
      }
      if (proc) ::closedir(proc);
    }

    JsonWriter w;
    w.BeginObject().Key("port").Uint(port).Key("sockets").BeginArray();
    for (const auto& s : sockets)
      w.BeginObject().Key("family").String(s.family).Key("local").String(s.local).Key("state").String(s.state)
          .Key("inode").Uint(s.inode).EndObject();
    w.EndArray().Key("holders").BeginArray();
    for (const auto& hd : holders) w.BeginObject().Key("pid").Int(hd.pid).Key("name").String(hd.name).EndObject();
    w.EndArray();
    if (!refused.empty()) w.Key("unreadable").Uint(refused.size());
    w.EndObject();
    std::string facts = w.Take();

    if (listen_inodes.empty())
      return Finding::NotReproduced("nothing listens on TCP port " + port_text +
                                        " now: whatever held it may have exited since",
                                    facts);
    if (!holders.empty()) {
      std::string who;
      for (const auto& hd : holders) who += (who.empty() ? "" : ", ") + hd.name + " (pid " + std::to_string(hd.pid) + ")";
      return Finding::Confirmed("TCP port " + port_text + " is held by " + who, facts);
    }
    if (!refused.empty())
      return Finding::Confirmed("TCP port " + port_text + " is held by a process whose descriptors "
                                "cannot be read (permission: " + refused.front() +
                                (refused.size() > 1 ? " and " + std::to_string(refused.size() - 1) + " more" : "") + ")",
                                facts);
    return Finding::Confirmed("TCP port " + port_text + " is held (by no process visible here)", facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeNetPort() { return std::make_unique<NetPort>(); }

}  // namespace triage::verifiers
