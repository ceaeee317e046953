#include "common.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace triage::verifiers {

std::optional<std::string> ReadSmallFile(const std::string& path, size_t max) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string out;
  char buf[8192];
  while (out.size() < max) {
    size_t n = std::fread(buf, 1, sizeof buf, f);
    if (n == 0) break;
    out.append(buf, n);
  }
  std::fclose(f);
  if (out.size() > max) out.resize(max);
  return out;
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

uint64_t ParseByteSize(const std::string& text) {
  std::string t;
  for (char c : Trim(text))
    if (c != ',') t.push_back(c);  // thousands separators: "214,748,364,800 bytes" (CuPy)
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  if (i == 0) return 0;
  double v = std::strtod(t.substr(0, i).c_str(), nullptr);
  std::string unit;
  for (char c : t.substr(i))
    if (!std::isspace(static_cast<unsigned char>(c)))
      unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "b" || unit == "bytes") mult = 1;
  else if (unit == "kib" || unit == "k" || unit == "kb") mult = 1024.0;
  else if (unit == "mib" || unit == "m" || unit == "mb") mult = 1024.0 * 1024;
  else if (unit == "gib" || unit == "g" || unit == "gb") mult = 1024.0 * 1024 * 1024;
  else if (unit == "tib" || unit == "t" || unit == "tb") mult = 1024.0 * 1024 * 1024 * 1024;
  else return 0;
  return static_cast<uint64_t>(std::llround(v * mult));
}

std::string ByteSizeText(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace triage::verifiers

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace triage::verifiers {

namespace {

// /dev/kmsg: one record per read(); "prio,seq,time,flags;message" then continuation lines.
bool ReadKmsg(const std::string& path, KernelLog& log, int& err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    return false;
  }
  std::vector<char> buf(16384);
  size_t total = 0;
  while (total < (64u << 20)) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EPIPE) continue;  // a record was overwritten while reading
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      err = errno;
      ::close(fd);
      return !log.lines.empty();
    }
    if (n <= 0) break;
    total += static_cast<size_t>(n);
    std::string rec(buf.data(), static_cast<size_t>(n));
    size_t semi = rec.find(';');
    size_t nl = rec.find('\n');
    if (semi == std::string::npos) continue;
    log.lines.push_back(rec.substr(semi + 1, (nl == std::string::npos ? rec.size() : nl) - semi - 1));
  }
  ::close(fd);
  return true;
}

}  // namespace

KernelLog ReadKernelLog(const VerifyConfig& config) {
  KernelLog log;
  std::vector<std::string> refused, failed;
  for (const auto& path : config.kernel_log_paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      failed.push_back(path + ": " + std::strerror(errno));
      continue;
    }
    int err = 0;
    if (S_ISCHR(st.st_mode)) {
      if (ReadKmsg(path, log, err)) {
        log.ok = true;
        log.source = path;
        return log;
      }
    } else if (auto text = ReadSmallFile(path, 64u << 20)) {
      log.lines = SplitLines(*text);
      log.ok = true;
      log.source = path;
      return log;
    } else {
      err = errno;
    }
    std::string why = path + ": " + std::strerror(err);
    if (err == EPERM || err == EACCES)
      refused.push_back(why);
    else
      failed.push_back(why);
  }
  if (!refused.empty()) {
    for (const auto& r : refused) {
      if (!log.permission.empty()) log.permission += "; ";
      log.permission += r;
    }
  }
  for (const auto& f : failed) {
    if (!log.error.empty()) log.error += "; ";
    log.error += f;
  }
  return log;
}

}  // namespace triage::verifiers
