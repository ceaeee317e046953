// What a log says of the machine it ran on, this machine's GPUs, and whether the two can be the
// same machine (detail/site.h). The scanners are hand-written: they run on every line of an
// incident's range, and a log's wording is matched loosely on purpose (a name that is not found
// costs a `not_applicable` nobody gets; a false one costs a check that should have run, so every
// form below demands the shape of a host name, a model or a version, not just a keyword).
#include "triage/verifiers/detail/site.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <set>

#include "common.h"
#include "triage/civil_time.h"
#include "triage/ingest/pipeline.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers::detail {

namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsNameChar(char c) { return IsAlnum(c) || c == '.' || c == '-' || c == '_'; }
char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string LowerText(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

// Case-insensitive find of `needle` (lower case) in `hay` from `from`.
size_t FindNoCase(std::string_view hay, std::string_view needle, size_t from = 0) {
  if (needle.empty() || hay.size() < needle.size()) return std::string_view::npos;
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && Lower(hay[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

void AddUnique(std::vector<std::string>& list, std::string value) {
  for (const auto& v : list)
    if (LowerText(v) == LowerText(value)) return;
  list.push_back(std::move(value));
}

void AddArch(LogSite& site, int arch, bool family, std::string text) {
  if (arch < 30 || arch > 139) return;  // no GPU of CUDA's has another
  if (family) arch = arch / 10 * 10;
  for (const auto& a : site.archs)
    if (a.arch == arch && a.family == family) return;
  site.archs.push_back({arch, family, std::move(text)});
}

void AddVersion(LogSite& site, int version) {
  if (version < 7000 || version > 30000) return;
  if (std::find(site.toolkit_versions.begin(), site.toolkit_versions.end(), version) ==
      site.toolkit_versions.end())
    site.toolkit_versions.push_back(version);
}

// "12.8" (major.minor, nothing more) at `text`; 0 otherwise. `len` gets what was read.
int ReadVersion(std::string_view text, size_t* len = nullptr) {
  size_t i = 0;
  int major = 0, minor = 0;
  while (i < text.size() && IsDigit(text[i]) && i < 2) major = major * 10 + (text[i++] - '0');
  if (i == 0 || i >= text.size() || text[i] != '.') return 0;
  size_t j = ++i;
  while (i < text.size() && IsDigit(text[i]) && i - j < 2) minor = minor * 10 + (text[i++] - '0');
  if (i == j || major < 7) return 0;
  if (len) *len = i;
  return major * 1000 + minor * 10;
}

// A path's toolkit root: "/usr/local/cuda-12.8/bin/nvcc" and "/usr/local/cuda-12.8/" are
// "/usr/local/cuda-12.8".
std::string ToolkitRoot(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  for (const char* tail : {"/bin/nvcc", "/bin"})
    if (path.size() > std::strlen(tail) &&
        path.compare(path.size() - std::strlen(tail), std::strlen(tail), tail) == 0)
      path.resize(path.size() - std::strlen(tail));
  return path;
}

void AddRoot(LogSite& site, const std::string& path) {
  if (path.size() < 2 || path[0] != '/' || path.find("..") != std::string::npos) return;
  std::string root = ToolkitRoot(path);
  AddUnique(site.toolkit_roots, root);
  // "/usr/local/cuda-12.8": the folder's name says the version too.
  size_t slash = root.find_last_of('/');
  std::string base = root.substr(slash + 1);
  for (const char* prefix : {"cuda-", "cuda"})
    if (base.rfind(prefix, 0) == 0) {
      if (int v = ReadVersion(std::string_view(base).substr(std::strlen(prefix)))) AddVersion(site, v);
      break;
    }
}

bool IsIpLike(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsDigit(c) || c == '.' || c == ':'; });
}

// Whether `name` can be a host's name as a log writes it: a letter first, no '_', not a word of
// prose or configuration, not a web domain.
bool PlausibleHost(std::string_view name, bool need_digit_or_dash) {
  if (name.size() < 2 || name.size() > 63 || !IsAlpha(name[0])) return false;
  if (name.find('_') != std::string_view::npos || IsIpLike(name)) return false;
  while (!name.empty() && (name.back() == '.' || name.back() == '-')) name.remove_suffix(1);
  static const std::set<std::string> kWords = {
      "localhost", "none", "null", "nil", "true", "false", "name", "names", "memory", "machine",
      "compiler", "side", "os", "ip", "address", "addr", "port", "is", "was", "the", "and", "or",
      "not", "to", "from", "in", "on", "of", "for", "with", "cpu", "gpu", "device", "code",
      "process", "system", "unknown", "undefined", "default", "any", "all", "local", "remote"};
  const std::string lower = LowerText(name);
  const std::string first = lower.substr(0, lower.find('.'));
  if (kWords.count(first)) return false;
  if (size_t dot = lower.rfind('.'); dot != std::string::npos) {
    static const std::set<std::string> kDomains = {"com", "org", "net", "io", "ai", "co", "cn",
                                                   "dev", "app", "cloud", "edu", "gov", "py"};
    if (kDomains.count(lower.substr(dot + 1))) return false;
  }
  if (need_digit_or_dash &&
      std::none_of(first.begin(), first.end(), [](char c) { return IsDigit(c) || c == '-'; }))
    return false;
  return true;
}

std::string_view NameAt(std::string_view line, size_t i) {
  size_t j = i;
  while (j < line.size() && IsNameChar(line[j])) ++j;
  return line.substr(i, j - i);
}

// `user@host:path$ ` and `[user@host path]$ ` at the line's start, after an optional "(venv) ".
void ScanPrompt(std::string_view line, LogSite& site) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i < line.size() && line[i] == '(') {
    size_t close = line.find(") ", i);
    if (close == std::string_view::npos || close - i > 64) return;
    i = close + 2;
  }
  const bool bracket = i < line.size() && line[i] == '[';
  if (bracket) ++i;
  std::string_view user = NameAt(line, i);
  if (user.empty() || user.size() > 64) return;
  i += user.size();
  if (i >= line.size() || line[i] != '@') return;
  std::string_view host = NameAt(line, ++i);
  if (host.empty()) return;
  i += host.size();
  if (bracket) {
    size_t close = line.find(']', i);
    if (i >= line.size() || line[i] != ' ' || close == std::string_view::npos || close + 1 >= line.size() ||
        (line[close + 1] != '$' && line[close + 1] != '#'))
      return;
  } else {
    if (i >= line.size() || line[i] != ':') return;
    size_t j = i + 1;
    while (j < line.size() && line[j] != ' ' && line[j] != '$' && line[j] != '#') ++j;
    if (j >= line.size() || (line[j] != '$' && line[j] != '#')) return;
    if (j + 1 < line.size() && line[j + 1] != ' ') return;
  }
  if (PlausibleHost(host, false)) AddUnique(site.hosts, std::string(host));
}

bool IsLevelWord(std::string_view w) {
  static const std::set<std::string> kLevels = {"info", "warn", "warning", "error", "debug", "trace",
                                                "critical", "fatal", "notice", "i", "w", "e", "d"};
  return kLevels.count(LowerText(w)) > 0;
}

// syslog: "Nov  2 07:06:01 host tag[pid]: " and "2026-11-02T07:06:01.123+00:00 host tag: ".
void ScanSyslog(std::string_view line, LogSite& site) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const bool month = line.size() > 16 && line[3] == ' ' &&
                     std::any_of(std::begin(kMonths), std::end(kMonths),
                                 [&](const char* m) { return line.compare(0, 3, m) == 0; });
  const bool iso = !month && line.size() > 20 && IsDigit(line[0]) && line[4] == '-' && line[7] == '-' &&
                   line[10] == 'T';
  size_t i = 0;
  if (month) {
    i = 4;
    if (line[i] == ' ') ++i;
    while (i < line.size() && IsDigit(line[i])) ++i;
    if (i >= line.size() || line[i] != ' ') return;
    ++i;
    if (line.size() < i + 9 || line[i + 2] != ':' || line[i + 5] != ':' || line[i + 8] != ' ') return;
    i += 9;
  } else if (iso) {
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp < 19) return;
    std::string_view stamp = line.substr(0, sp);
    // Only a stamp with a zone: app logs print local times without one.
    if (stamp.back() != 'Z' && stamp.find('+', 19) == std::string_view::npos &&
        stamp.find('-', 19) == std::string_view::npos)
      return;
    i = sp + 1;
  } else {
    return;
  }
  std::string_view host = NameAt(line, i);
  if (host.empty() || IsLevelWord(host)) return;
  // A CI runner's "2025-11-26T03:20:47.01Z Attempted locations:" is prose, not a host: with an
  // ISO stamp only a lower-case name counts.
  if (iso && std::any_of(host.begin(), host.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }))
    return;
  size_t j = i + host.size();
  if (j >= line.size() || line[j] != ' ') return;
  // The tag: "name:" or "name[pid]:", then a space or the end.
  size_t k = j + 1;
  while (k < line.size() && (IsNameChar(line[k]) || line[k] == '/')) ++k;
  if (k == j + 1 || k >= line.size()) return;
  if (line[k] == '[') {
    while (k < line.size() && line[k] != ']') ++k;
    ++k;
  }
  if (k >= line.size() || line[k] != ':' || (k + 1 < line.size() && line[k + 1] != ' ')) return;
  if (PlausibleHost(host, false)) AddUnique(site.hosts, std::string(host));
}

// NCCL: "host:pid:tid [dev] NCCL ...".
void ScanNccl(std::string_view line, LogSite& site) {
  size_t n = line.find(" NCCL ");
  if (n == std::string_view::npos) return;
  std::string_view host = NameAt(line, 0);
  size_t i = host.size();
  auto digits = [&](size_t& k) {
    size_t s = k;
    while (k < line.size() && IsDigit(line[k])) ++k;
    return k > s;
  };
  if (host.empty() || i >= line.size() || line[i] != ':') return;
  ++i;
  if (!digits(i) || i >= line.size() || line[i] != ':') return;
  ++i;
  if (!digits(i) || line.compare(i, 2, " [") != 0) return;
  if (PlausibleHost(host, false)) AddUnique(site.hosts, std::string(host));
}

// "hostname: x", "hostname=x", "host=x", "host: x", "host x," (a name with a digit or '-').
void ScanHostWords(std::string_view line, LogSite& site) {
  for (size_t at = FindNoCase(line, "host"); at != std::string_view::npos; at = FindNoCase(line, "host", at + 4)) {
    if (at > 0 && (IsAlnum(line[at - 1]) || line[at - 1] == '_' || line[at - 1] == '-' || line[at - 1] == '.'))
      continue;
    size_t i = at + 4;
    bool hostname = FindNoCase(line.substr(i, 4), "name") == 0;
    if (hostname) i += 4;
    if (i < line.size() && (IsAlnum(line[i]) || line[i] == '_' || line[i] == '-')) continue;  // "hosts"
    size_t s = i;
    while (i < line.size() && i - s < 4 && (line[i] == ' ' || line[i] == ':' || line[i] == '=' ||
                                            line[i] == '\'' || line[i] == '"' || line[i] == '\t'))
      ++i;
    if (i == s) continue;
    std::string_view name = NameAt(line, i);
    if (PlausibleHost(name, !hostname)) AddUnique(site.hosts, std::string(name));
  }
  // Kubernetes and Slurm: "Node:  gpu-node-7/10.0.0.7", "nodeName": "x", NODE_NAME=x.
  for (const char* key : {"Node:", "\"nodeName\":", "nodeName:", "NODE_NAME=", "SLURMD_NODENAME="}) {
    size_t at = line.find(key);
    if (at == std::string_view::npos) continue;
    if (std::strcmp(key, "Node:") == 0 && line.find_first_not_of(' ') != at) continue;  // kubectl's, at a line's start
    size_t i = at + std::strlen(key);
    while (i < line.size() && (line[i] == ' ' || line[i] == '"' || line[i] == '\'')) ++i;
    std::string_view name = NameAt(line, i);
    if (PlausibleHost(name, false)) AddUnique(site.hosts, std::string(name));
  }
}

std::vector<std::string> ModelTokens(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '/') {
      if (!cur.empty() && cur != "nvidia") out.push_back(cur);
      cur.clear();
    } else {
      cur += Lower(c);
    }
  }
  if (!cur.empty() && cur != "nvidia") out.push_back(cur);
  return out;
}

bool Covers(const std::vector<std::string>& all, const std::vector<std::string>& part) {
  return !part.empty() && std::all_of(part.begin(), part.end(), [&](const std::string& t) {
    return std::find(all.begin(), all.end(), t) != all.end();
  });
}

bool ModelMatches(std::string_view logged, std::string_view device) {
  auto a = ModelTokens(logged), b = ModelTokens(device);
  return Covers(b, a) || Covers(a, b);
}

// Adds a model, or keeps the longer of two names of one model ("NVIDIA RTX PRO 6000 Blackwell"
// and "NVIDIA RTX PRO 6000 Blackwell Server Edition").
void AddModel(LogSite& site, std::string model) {
  for (auto& m : site.gpu_models)
    if (ModelMatches(m, model)) {
      if (model.size() > m.size()) m = std::move(model);
      return;
    }
  site.gpu_models.push_back(std::move(model));
}

bool HasModelShape(const std::vector<std::string>& words) {
  for (const auto& w : words) {
    bool letter = std::any_of(w.begin(), w.end(), IsAlpha);
    bool digit = std::any_of(w.begin(), w.end(), IsDigit);
    bool all_digits = std::all_of(w.begin(), w.end(), IsDigit);
    if ((letter && digit) || (all_digits && w.size() >= 3)) return true;
  }
  return false;
}

// "NVIDIA <model>": capitalised or numeric words up to a delimiter, two spaces, or a word of
// prose ("with", "GPU").
void ScanGpuModels(std::string_view line, LogSite& site) {
  static const std::set<std::string> kNotModels = {
      "driver", "corporation", "cuda", "nccl", "nvml", "gpu", "gpus", "container", "management",
      "linux", "kernel", "system", "persistence", "smi", "tensorrt", "cudnn", "dali", "triton",
      "apex", "collective", "inference", "display", "graphics", "nsight", "hpc", "nim", "riva",
      "driver:", "toolkit", "runtime", "device", "devices", "software", "license"};
  for (size_t at = line.find("NVIDIA "); at != std::string_view::npos; at = line.find("NVIDIA ", at + 7)) {
    if (at > 0 && (IsAlnum(line[at - 1]) || line[at - 1] == '-' || line[at - 1] == '_')) continue;
    std::vector<std::string> words;
    size_t i = at + 7;
    while (i < line.size() && words.size() < 7) {
      size_t j = i;
      // A backslash ends a word too: a JSON log's raw line has "HBM3\n\"," where the text ends.
      while (j < line.size() && line[j] != ' ' && !std::strchr(",;()'\"|:[]{}<>=\\", line[j])) ++j;
      std::string w(line.substr(i, j - i));
      while (!w.empty() && w.back() == '.') w.pop_back();
      if (w.empty() || std::islower(static_cast<unsigned char>(w[0])) || LowerText(w) == "gpu" ||
          LowerText(w) == "gpus")
        break;
      if (words.empty() && kNotModels.count(LowerText(w))) break;
      words.push_back(w);
      if (j >= line.size() || line[j] != ' ' || (j + 1 < line.size() && line[j + 1] == ' ')) break;
      i = j + 1;
    }
    if (words.empty() || !HasModelShape(words)) continue;
    std::string model;
    for (const auto& w : words) model += (model.empty() ? "" : " ") + w;
    AddModel(site, "NVIDIA " + model);
  }
}

// Whether the words around a capability make it a minimum, not the device's own: "requires
// compute capability >= 8.0", "of at least 7.0", "Minimum capability: 80". A later "your GPU has"
// or "Current" takes it back ("... >= (7, 0) but your GPU has capability (6, 1)").
bool IsRequirement(std::string_view before, std::string_view between) {
  const std::string m = LowerText(between);
  for (const char* w : {"least", "min", ">", "requir", "need"})
    if (m.find(w) != std::string::npos) return true;
  const std::string b = LowerText(before.substr(before.size() > 48 ? before.size() - 48 : 0));
  size_t req = std::string::npos, own = std::string::npos;
  auto last = [&](std::initializer_list<const char*> words, size_t& at) {
    for (const char* w : words)
      if (size_t p = b.rfind(w); p != std::string::npos && (at == std::string::npos || p > at)) at = p;
  };
  last({"minimum", "min ", "min_", "least", "requir", "need", "above", "newer", ">="}, req);
  last({"your", " has ", "current", "this gpu"}, own);
  return req != std::string::npos && (own == std::string::npos || own < req);
}

// "8.6" at `text` (one or two digits, a dot, one digit): 86; 0 otherwise.
int ReadCapability(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && IsDigit(text[i]) && i < 2) ++i;
  if (i == 0 || i + 1 >= text.size() || text[i] != '.' || !IsDigit(text[i + 1])) return 0;
  if (i + 2 < text.size() && IsDigit(text[i + 2])) return 0;  // "12.80": a version, not a capability
  return std::atoi(std::string(text.substr(0, i)).c_str()) * 10 + (text[i + 1] - '0');
}

void ScanArchs(std::string_view line, LogSite& site) {
  // FlashInfer's device probe: "SM 12.x requires CUDA >= 12.9".
  for (size_t at = line.find("SM "); at != std::string_view::npos; at = line.find("SM ", at + 3)) {
    size_t i = at + 3, s = i;
    while (i < line.size() && IsDigit(line[i]) && i - s < 2) ++i;
    if (i > s && i + 1 < line.size() && line[i] == '.' && (line[i + 1] == 'x' || line[i + 1] == 'X'))
      AddArch(site, std::atoi(std::string(line.substr(s, i - s)).c_str()) * 10, true,
              "SM " + std::string(line.substr(s, i - s)) + ".x");
  }
  // "... capability 8.6", "capability: (8, 6)", "capability sm_120", "Current capability: 75".
  for (size_t at = FindNoCase(line, "capability"); at != std::string_view::npos;
       at = FindNoCase(line, "capability", at + 10)) {
    size_t i = at + 10;
    const size_t s = i;
    while (i < line.size() && i - s < 24 && !IsDigit(line[i]) && line[i] != '(' &&
           FindNoCase(line.substr(i, 3), "sm_") != 0)
      ++i;
    if (i >= line.size() || i - s >= 24) continue;
    if (IsRequirement(line.substr(0, at), line.substr(s, i - s))) continue;
    int arch = 0;
    if (line[i] == '(') {
      int major = 0, minor = 0;
      const std::string t(line.substr(i, 12));
      if ((std::sscanf(t.c_str(), "(%d, %d)", &major, &minor) == 2 ||
           std::sscanf(t.c_str(), "(%d,%d)", &major, &minor) == 2) &&
          minor >= 0 && minor <= 9)
        arch = major * 10 + minor;
    } else if (FindNoCase(line.substr(i, 3), "sm_") == 0) {
      arch = ParseArch(std::string(NameAt(line, i)));
    } else if (int cap = ReadCapability(line.substr(i))) {
      arch = cap;
    } else {
      size_t j = i;
      while (j < line.size() && IsDigit(line[j])) ++j;
      if (j - i >= 2 && j - i <= 3 && (j + 1 >= line.size() || line[j] != '.' || !IsDigit(line[j + 1])))
        arch = std::atoi(std::string(line.substr(i, j - i)).c_str());
    }
    if (arch) AddArch(site, arch, false, "compute capability " + std::to_string(arch / 10) + "." + std::to_string(arch % 10));
  }
  // PyTorch: "... with CUDA capability sm_120 is not compatible with the current PyTorch".
  for (size_t at = line.find("sm_"); at != std::string_view::npos; at = line.find("sm_", at + 3)) {
    std::string_view rest = line.substr(at);
    size_t end = rest.find(' ');
    if (end == std::string_view::npos || rest.substr(end, 19) != " is not compatible ") continue;
    if (int arch = ParseArch(std::string(rest.substr(0, end)))) AddArch(site, arch, false, std::string(rest.substr(0, end)));
  }
}

void ScanToolkits(std::string_view line, LogSite& site) {
  for (const char* key : {"CUDA_HOME", "CUDA_PATH"}) {
    for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 9)) {
      size_t i = at + 9;
      while (i < line.size() && i - at < 16 && (line[i] == '=' || line[i] == ':' || line[i] == ' ' ||
                                                line[i] == '\'' || line[i] == '"'))
        ++i;
      if (i >= line.size() || line[i] != '/') continue;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\'' && line[j] != '"' && line[j] != ',' &&
             line[j] != ')' && line[j] != ';' && line[j] != ':')
        ++j;
      AddRoot(site, std::string(line.substr(i, j - i)));
    }
  }
  for (size_t at = line.find("/bin/nvcc"); at != std::string_view::npos; at = line.find("/bin/nvcc", at + 9)) {
    size_t end = at + 9;
    if (end < line.size() && IsNameChar(line[end])) continue;  // "/bin/nvcc_wrapper"
    size_t i = at;
    while (i > 0 && line[i - 1] != ' ' && line[i - 1] != '\'' && line[i - 1] != '"' && line[i - 1] != '(' &&
           line[i - 1] != '=' && line[i - 1] != ',' && line[i - 1] != ':')
      --i;
    if (line[i] == '/') AddRoot(site, std::string(line.substr(i, end - i)));
  }
  // nvcc --version: "Cuda compilation tools, release 12.8, V12.8.93".
  if (size_t at = line.find("Cuda compilation tools, release "); at != std::string_view::npos)
    AddVersion(site, ReadVersion(line.substr(at + 32)));
  // torch.utils.cpp_extension: "The detected CUDA version (12.8) mismatches ...".
  if (size_t at = line.find("detected CUDA version ("); at != std::string_view::npos)
    AddVersion(site, ReadVersion(line.substr(at + 23)));
}

bool SameFirstLabel(std::string_view a, std::string_view b) {
  a = a.substr(0, a.find('.'));
  b = b.substr(0, b.find('.'));
  return !a.empty() && LowerText(a) == LowerText(b);
}

bool ArchMatches(const LoggedArch& a, int device_arch) {
  return a.family ? device_arch / 10 == a.arch / 10 : device_arch == a.arch;
}

std::string GpuText(const LogSite& log) {
  std::string archs;
  for (size_t i = 0; i < log.archs.size() && i < 2; ++i) archs += (i ? ", " : "") + ArchName(log.archs[i]);
  std::string models;
  for (size_t i = 0; i < log.gpu_models.size() && i < 2; ++i) models += (i ? ", " : "") + log.gpu_models[i];
  if (archs.empty()) return models + " GPUs";
  return archs + " GPUs" + (models.empty() ? "" : " (" + models + ")");
}

std::string HereText(const HostIdentity& here, bool gpus_named) {
  std::string s = "this host is " + (here.name.empty() ? std::string("this machine") : here.name);
  if (!gpus_named) return s;
  if (!here.gpus_known) return s + " (its GPUs unknown: " + here.gpu_note + ")";
  if (here.gpus.empty()) return s + " with no GPU";
  std::map<std::string, int> kinds;
  for (const auto& g : here.gpus) ++kinds[g.name + " (sm_" + std::to_string(g.arch) + ")"];
  std::string list;
  for (const auto& [k, n] : kinds) list += (list.empty() ? "" : ", ") + std::to_string(n) + " x " + k;
  return s + " with " + list;
}

}  // namespace

std::string ArchName(const LoggedArch& arch) {
  if (arch.family) return "SM " + std::to_string(arch.arch / 10) + ".x";
  return "sm_" + std::to_string(arch.arch);
}

bool SameHostName(std::string_view a, std::string_view b) { return SameFirstLabel(a, b); }

namespace {

// ".../site-packages" or ".../dist-packages" as an absolute path a line shows (a traceback's
// frame, a warning's location).
void ScanPythonSites(std::string_view line, LogSite& site) {
  for (std::string_view folder : {"/site-packages/", "/dist-packages/"}) {
    const size_t at = line.find(folder);
    if (at == std::string_view::npos || site.python_sites.size() >= 4) continue;
    size_t start = at;
    while (start > 0 && line[start - 1] != '"' && line[start - 1] != '\'' && line[start - 1] != ' ' &&
           line[start - 1] != '(')
      --start;
    const std::string path(line.substr(start, at + folder.size() - 1 - start));
    if (path.empty() || path[0] != '/' || path.find("/../") != std::string::npos) continue;
    if (std::find(site.python_sites.begin(), site.python_sites.end(), path) == site.python_sites.end())
      site.python_sites.push_back(path);
  }
}

// The absolute paths a line names, for the checks of the file systems the log wrote to. A path
// starts a word (after a space, a quote, '=', '(', '[', ',' or ':') and ends at a space, a
// quote or a closing bracket; a trailing '.', ',' or ':' is not part of it.
void ScanNamedPaths(std::string_view line, LogSite& site) {
  constexpr size_t kMaxPaths = 8;
  const size_t frame = line.find("File \"");
  if (frame != std::string_view::npos && line.find("\", line ", frame) != std::string_view::npos)
    return;  // a traceback's frame: the source file, not what was written
  for (size_t at = line.find('/'); at != std::string_view::npos && site.named_paths.size() < kMaxPaths;
       at = line.find('/', at + 1)) {
    const char before = at == 0 ? ' ' : line[at - 1];
    if (!(before == ' ' || before == '"' || before == '\'' || before == '=' || before == '(' ||
          before == '[' || before == ',' || before == ':' || before == '\t'))
      continue;
    if (before == ':' && at + 1 < line.size() && line[at + 1] == '/') {  // a URL's "://"
      at = line.find_first_of(" \t\"'", at);
      if (at == std::string_view::npos) break;
      continue;
    }
    size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '"' &&
           line[end] != '\'' && line[end] != ')' && line[end] != ']' && line[end] != ',')
      ++end;
    std::string path(line.substr(at, end - at));
    while (path.size() > 1 && (path.back() == '.' || path.back() == ':' || path.back() == '/'))
      path.pop_back();
    at = end == 0 ? 0 : end - 1;
    if (path.size() < 2 || path.size() > 1024 || path.find("/../") != std::string::npos ||
        path.find("-packages/") != std::string::npos)
      continue;
    if (path.rfind("/proc/", 0) == 0 || path.rfind("/sys/", 0) == 0 || path.rfind("/dev/", 0) == 0 ||
        path == "/proc" || path == "/sys" || path == "/dev")
      continue;
    if (std::find(site.named_paths.begin(), site.named_paths.end(), path) == site.named_paths.end())
      site.named_paths.push_back(std::move(path));
  }
}

}  // namespace

void ScanLine(std::string_view line, LogSite& site) {
  if (line.size() > 4096) line = line.substr(0, 4096);  // a dump's tail names no machine
  ScanPrompt(line, site);
  ScanSyslog(line, site);
  ScanNccl(line, site);
  ScanHostWords(line, site);
  if (line.find("-packages/") != std::string_view::npos) ScanPythonSites(line, site);
  if (line.find('/') != std::string_view::npos) ScanNamedPaths(line, site);
  if (line.find("NVIDIA ") != std::string_view::npos) ScanGpuModels(line, site);
  if (line.find("SM ") != std::string_view::npos || FindNoCase(line, "capability") != std::string_view::npos ||
      line.find("sm_") != std::string_view::npos)
    ScanArchs(line, site);
  if (line.find("CUDA_") != std::string_view::npos || line.find("nvcc") != std::string_view::npos ||
      line.find("CUDA version") != std::string_view::npos || line.find("Cuda compilation") != std::string_view::npos)
    ScanToolkits(line, site);
}

void ScanCaptures(const std::map<std::string, std::string>& captures, LogSite& site) {
  auto get = [&](const char* key) {
    auto it = captures.find(key);
    return it == captures.end() ? std::string() : it->second;
  };
  for (const char* key : {"family", "sm"}) {
    std::string v = get(key);
    // A family is the device's ("SM 12.x requires ..."); a plain sm is often a build target.
    if (v.size() >= 3 && (v.back() == 'x' || v.back() == 'X') && v[v.size() - 2] == '.')
      if (int arch = ParseArch(v)) AddArch(site, arch, true, "SM " + v);
  }
  for (const char* key : {"cc", "cap"}) {
    std::string v = get(key);
    if (v.empty() || !IsDigit(v[0])) continue;
    if (int arch = ParseArch(v)) AddArch(site, arch, false, "compute capability " + v);
  }
  if (!get("major").empty() && !get("minor").empty()) {
    int major = std::atoi(get("major").c_str()), minor = std::atoi(get("minor").c_str());
    if (minor >= 0 && minor <= 9) AddArch(site, major * 10 + minor, false, "capability (" + get("major") + ", " + get("minor") + ")");
  }
  std::string gpu = get("gpu");
  if (!gpu.empty() && !std::all_of(gpu.begin(), gpu.end(), IsDigit)) {
    std::vector<std::string> words;
    std::string w;
    for (char c : gpu + " ") {
      if (c == ' ') {
        if (!w.empty()) words.push_back(w);
        w.clear();
      } else {
        w += c;
      }
    }
    if (HasModelShape(words)) AddModel(site, gpu.rfind("NVIDIA ", 0) == 0 ? gpu : "NVIDIA " + gpu);
  }
  for (const char* key : {"installed", "detected"})
    if (int v = ReadVersion(get(key))) AddVersion(site, v);
}

std::optional<int64_t> ParseLogTime(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  std::string t(text.substr(0, 64));
  int n = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) return std::nullopt;
  if (t.size() > 10 && (t[10] == 'T' || t[10] == ' ')) std::sscanf(t.c_str() + 11, "%2d:%2d:%2d", &h, &mi, &s);
  if (y < 1990 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  int64_t secs = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + s;
  // A zone after the time: "+02:00" / "-0500" / "Z".
  size_t zone = t.find_first_of("+-Z", 19);
  if (zone != std::string::npos && t[zone] != 'Z') {
    int zh = 0, zm = 0;
    if (std::sscanf(t.c_str() + zone + 1, "%2d:%2d", &zh, &zm) >= 1 || std::sscanf(t.c_str() + zone + 1, "%2d%2d", &zh, &zm) >= 1)
      secs -= (t[zone] == '+' ? 1 : -1) * (zh * 3600 + zm * 60);
  }
  return secs;
}

std::string TimeText(int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::optional<int64_t> BootTime(const VerifyConfig& config) {
  auto text = ReadSmallFile(config.uptime_path, 256);
  if (!text) return std::nullopt;
  double up = std::strtod(text->c_str(), nullptr);
  if (up <= 0) return std::nullopt;
  return static_cast<int64_t>(std::time(nullptr)) - static_cast<int64_t>(up);
}

namespace {

// Reads the source's lines [lo, hi] into `site` when the evidence lines in that range read as the
// evidence does; false when the source cannot be read or is not the file that was analysed.
bool ScanSource(const core::Incident& incident, uint64_t lo, uint64_t hi, LogSite& site, uint64_t& budget) {
  if (incident.source.empty() || incident.source == "-") return false;
  struct stat st {};
  if (::stat(incident.source.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  auto src = ingest::OpenSource(incident.source);
  if (!src.ok()) return false;
  // The evidence's words, by line: a file whose line N lacks them is not the one analysed.
  std::map<uint64_t, std::string> expect;
  auto note = [&](const std::vector<core::Evidence>& ev) {
    for (const auto& e : ev) {
      if (e.source != incident.source || e.line < lo || e.line > hi) continue;
      std::string best, cur;
      for (char c : e.text + " ") {
        if (IsAlnum(c) || c == '_') {
          cur += c;
        } else {
          if (cur.size() > best.size()) best = cur;
          cur.clear();
        }
      }
      if (best.size() >= 4) expect[e.line] = best;
    }
  };
  for (const auto& c : incident.causes) {
    note(c.evidence);
    for (const auto& s : c.symptoms) note(s.evidence);
  }
  LogSite found;
  size_t total = 0, matched = 0;
  uint64_t number = 0;
  std::string pending;
  std::vector<char> buf(1 << 16);
  auto take = [&](std::string_view line) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (number < lo || number > hi) return;
    if (auto it = expect.find(number); it != expect.end()) {
      if (line.find(it->second) == std::string_view::npos) return;
      ++matched;
    }
    ScanLine(line, found);
  };
  bool done = false;
  while (!done && number < hi) {
    auto n = (*src)->Read(buf.data(), buf.size());
    if (!n.ok()) return false;
    if (*n == 0) break;
    total += *n;
    if (*n > budget) {
      budget = 0;
      return false;
    }
    budget -= *n;
    pending.append(buf.data(), *n);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      take(std::string_view(pending).substr(start, nl - start));
      if (number >= hi) {
        done = true;
        break;
      }
    }
    pending.erase(0, start);
  }
  if (!done && !pending.empty() && number < hi) take(pending);
  if (matched != expect.size()) return false;
  for (auto& h : found.hosts) AddUnique(site.hosts, h);
  for (auto& m : found.gpu_models) AddModel(site, m);
  for (auto& a : found.archs) AddArch(site, a.arch, a.family, a.text);
  for (auto& r : found.toolkit_roots) AddUnique(site.toolkit_roots, r);
  for (int v : found.toolkit_versions) AddVersion(site, v);
  for (auto& p : found.python_sites)
    if (site.python_sites.size() < 4) AddUnique(site.python_sites, p);
  for (auto& p : found.named_paths)
    if (site.named_paths.size() < 8 &&
        std::find(site.named_paths.begin(), site.named_paths.end(), p) == site.named_paths.end())
      site.named_paths.push_back(p);
  return true;
}

}  // namespace

LogSite ReadLogSite(const core::Incident& incident, const std::string& this_host, uint64_t& budget) {
  LogSite site;
  if (!incident.host.empty() && !SameHostName(incident.host, this_host) && !SameHostName(incident.host, "localhost"))
    site.hosts.push_back(incident.host);
  for (const auto& c : incident.causes) {
    ScanCaptures(c.captures, site);
    for (const auto& e : c.evidence) ScanLine(e.text, site);
    for (const auto& s : c.symptoms)
      for (const auto& e : s.evidence) ScanLine(e.text, site);
  }
  // A few lines before the incident: the prompt that started the service, a launcher's header.
  constexpr uint64_t kBefore = 8;
  if (incident.first_line > 0 && incident.last_line >= incident.first_line) {
    const uint64_t lo = incident.first_line > kBefore ? incident.first_line - kBefore : 1;
    site.lines_read = budget > 0 && ScanSource(incident, lo, incident.last_line, site, budget);
  }
  if (incident.ended) site.time = ParseLogTime(*incident.ended);
  if (!site.time && incident.started) site.time = ParseLogTime(*incident.started);
  for (const auto& h : site.hosts) site.names_this_host |= SameHostName(h, this_host);
  return site;
}

HostIdentity ProbeGpus(const VerifyConfig& config) {
  HostIdentity id;
  DriverOpen open = OpenDriver(config);
  if (open.driver) {
    id.gpus_known = true;
    for (const auto& d : open.driver->devices) id.gpus.push_back({d.name, d.arch()});
    NvmlOpen nvml = OpenNvml(config);
    char buf[96] = {};
    if (nvml.nvml && nvml.nvml->api.nvmlSystemGetDriverVersion &&
        nvml.nvml->api.nvmlSystemGetDriverVersion(buf, sizeof buf - 1) == kNvmlSuccess)
      id.driver_release = buf;
    return id;
  }
  id.gpu_note = open.problem.Reason();
  if (open.problem.problem == GpuProblem::kNoDevice) {
    id.gpus_known = true;  // the driver works and lists none
    return id;
  }
  if (open.problem.problem == GpuProblem::kNoDriver) {
    // No driver library: a machine without a GPU, unless a device node says otherwise.
    bool node = false;
    for (const char* n : {"nvidiactl", "nvidia0", "nvidia1", "nvidia-uvm"}) {
      struct stat st {};
      node |= ::stat((config.device_node_dir + "/" + n).c_str(), &st) == 0;
    }
    id.gpus_known = !node;
    if (node) id.gpu_note += "; an NVIDIA device node exists in " + config.device_node_dir;
  }
  return id;
}

bool NamesGpus(const LogSite& log) { return !log.gpu_models.empty() || !log.archs.empty(); }

SiteJudgement JudgeSite(const LogSite& log, const HostIdentity& here) {
  SiteJudgement j;
  bool host_match = false;
  for (const auto& h : log.hosts) host_match |= SameHostName(h, here.name);
  const bool host_differs = !log.hosts.empty() && !host_match;
  j.log_host = log.hosts.empty() ? "" : log.hosts.front();
  if (host_match)
    for (const auto& h : log.hosts)
      if (SameHostName(h, here.name)) j.log_host = h;
  const bool gpus_named = NamesGpus(log);
  if (gpus_named && here.gpus_known) {
    if (here.gpus.empty()) {
      j.gpus_differ = true;
    } else {
      bool models_ok = log.gpu_models.empty(), archs_ok = log.archs.empty();
      for (const auto& g : here.gpus) {
        for (const auto& m : log.gpu_models) models_ok |= ModelMatches(m, g.name);
        for (const auto& a : log.archs) archs_ok |= ArchMatches(a, g.arch);
      }
      j.gpus_differ = !(models_ok && archs_ok);
    }
  }
  j.other_host = host_differs || j.gpus_differ;
  const std::string here_name = here.name.empty() ? std::string("this machine") : here.name;
  if (j.other_host) {
    j.reason = "the log is from " + (host_differs ? j.log_host : std::string(host_match ? j.log_host : "a host")) +
               (gpus_named ? " with " + GpuText(log) : std::string()) + "; " + HereText(here, gpus_named);
  } else if (host_match) {
    j.reason = "the log names this host (" + j.log_host + ")" +
               (gpus_named && here.gpus_known ? ", and its " + GpuText(log) + " are here" : std::string());
  } else if (gpus_named && here.gpus_known) {
    j.reason = "the log names no host; its " + GpuText(log) + " are this host's (" + here_name + ")";
  } else if (gpus_named) {
    j.reason = "the log names no host; " + HereText(here, true);
  } else {
    j.reason = "the log names no host or GPU to tell it from this host (" + here_name + ")";
  }

  JsonWriter w;
  w.BeginObject().Key("log").BeginObject();
  w.Key("hosts").BeginArray();
  for (const auto& h : log.hosts) w.String(h);
  w.EndArray().Key("gpus").BeginArray();
  for (const auto& m : log.gpu_models) w.String(m);
  w.EndArray().Key("archs").BeginArray();
  for (const auto& a : log.archs) w.String(ArchName(a));
  w.EndArray().Key("toolkits").BeginArray();
  for (const auto& r : log.toolkit_roots) w.String(r);
  w.EndArray().Key("toolkit_versions").BeginArray();
  for (int v : log.toolkit_versions) w.String(CudaVersionText(v));
  w.EndArray();
  if (log.time) w.Key("time").String(TimeText(*log.time));
  w.Key("lines_read").Bool(log.lines_read);
  w.EndObject().Key("here").BeginObject().Key("host").String(here.name);
  w.Key("gpus_known").Bool(here.gpus_known).Key("gpus").BeginArray();
  for (const auto& g : here.gpus)
    w.BeginObject().Key("name").String(g.name).Key("arch").String("sm_" + std::to_string(g.arch)).EndObject();
  w.EndArray();
  if (!here.gpu_note.empty()) w.Key("note").String(here.gpu_note);
  w.EndObject().Key("other_host").Bool(j.other_host).EndObject();
  j.facts_json = w.Take();
  return j;
}

}  // namespace triage::verifiers::detail
