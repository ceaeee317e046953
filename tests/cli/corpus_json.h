// A small JSON reader for the corpus and example tests: enough to read `triage analyze --json`
// and cases.jsonl (objects, arrays, strings with escapes, numbers, true/false/null). Test-only;
// throws std::runtime_error on malformed input.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace corpus_test {

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> fields;

  const Json* get(std::string_view key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return &v;
    return nullptr;
  }
  // Convenience accessors that tolerate absence.
  std::string s(std::string_view key) const {
    const Json* v = get(key);
    return v && v->kind == kString ? v->str : std::string();
  }
  double n(std::string_view key, double dflt = 0) const {
    const Json* v = get(key);
    return v && v->kind == kNumber ? v->num : dflt;
  }
  const std::vector<Json>& arr(std::string_view key) const {
    static const std::vector<Json> kEmpty;
    const Json* v = get(key);
    return v && v->kind == kArray ? v->items : kEmpty;
  }
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : t_(text) {}
  Json Parse() {
    Json v = Value();
    Ws();
    if (p_ != t_.size()) Fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void Fail(const char* what) const {
    throw std::runtime_error(std::string("json: ") + what + " at offset " + std::to_string(p_));
  }
  void Ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' || t_[p_] == '\r' || t_[p_] == '\t')) ++p_;
  }
  char Peek() {
    Ws();
    if (p_ >= t_.size()) Fail("unexpected end");
    return t_[p_];
  }
  void Expect(char c) {
    if (Peek() != c) Fail("unexpected character");
    ++p_;
  }
  bool Lit(std::string_view w) {
    if (t_.substr(p_, w.size()) == w) {
      p_ += w.size();
      return true;
    }
    return false;
  }
  static void Utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  unsigned Hex4() {
    if (p_ + 4 > t_.size()) Fail("short \\u escape");
    unsigned v = unsigned(std::strtoul(std::string(t_.substr(p_, 4)).c_str(), nullptr, 16));
    p_ += 4;
    return v;
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (true) {
      if (p_ >= t_.size()) Fail("unterminated string");
      char c = t_[p_++];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= t_.size()) Fail("bad escape");
      char e = t_[p_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          unsigned cp = Hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && Lit("\\u")) {
            unsigned lo = Hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          Utf8(out, cp);
          break;
        }
        default: out += e;
      }
    }
    return out;
  }
  Json Value() {
    Json v;
    char c = Peek();
    if (c == '{') {
      ++p_;
      v.kind = Json::kObject;
      if (Peek() == '}') {
        ++p_;
        return v;
      }
      while (true) {
        std::string k = String();
        Expect(':');
        v.fields.emplace_back(std::move(k), Value());
        if (Peek() == ',') {
          ++p_;
          continue;
        }
        Expect('}');
        return v;
      }
    }
    if (c == '[') {
      ++p_;
      v.kind = Json::kArray;
      if (Peek() == ']') {
        ++p_;
        return v;
      }
      while (true) {
        v.items.push_back(Value());
        if (Peek() == ',') {
          ++p_;
          continue;
        }
        Expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::kString;
      v.str = String();
      return v;
    }
    if (Lit("true")) {
      v.kind = Json::kBool;
      v.b = true;
      return v;
    }
    if (Lit("false")) {
      v.kind = Json::kBool;
      return v;
    }
    if (Lit("null")) return v;
    size_t start = p_;
    while (p_ < t_.size() && std::string_view("+-0123456789.eE").find(t_[p_]) != std::string_view::npos) ++p_;
    if (start == p_) Fail("unexpected character");
    v.kind = Json::kNumber;
    v.num = std::strtod(std::string(t_.substr(start, p_ - start)).c_str(), nullptr);
    return v;
  }

  std::string_view t_;
  size_t p_ = 0;
};

inline Json ParseJson(std::string_view text) { return JsonParser(text).Parse(); }

// Runs a shell command, returns its stdout and exit status.
struct RunResult {
  std::string out;
  int status = -1;
};
inline RunResult RunCommand(const std::string& cmd) {
  RunResult r;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  int st = pclose(f);
  r.status = (st >= 0 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// The binary under test: $TRIAGE_TEST_BINARY when set (to try another build), else the one this
// suite was built with.
inline std::string TriageBinary() {
  if (const char* e = std::getenv("TRIAGE_TEST_BINARY"); e && *e) return e;
  return TRIAGE_BINARY;
}

// `triage analyze` on one file, from the source folder (so that evidence paths are relative and
// stable), with no user configuration or database taking part. `flags` go before the file
// ("--verify ").
inline RunResult Analyze(const std::string& rel_path, bool json, const std::string& flags = "") {
  std::string cmd = "cd " + ShellQuote(TRIAGE_SOURCE_DIR) +
                    " && tmp=$(mktemp -d) && env -u TRIAGE_DB HOME=$tmp XDG_CONFIG_HOME=$tmp/config "
                    "XDG_STATE_HOME=$tmp/state XDG_DATA_HOME=$tmp/data NO_COLOR=1 TRIAGE_RULES_DIR=" +
                    ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " +
                    ShellQuote(TriageBinary()) + " analyze " + (json ? "--json " : "") +
                    "--no-store " + flags + ShellQuote(rel_path) +
                    " </dev/null 2>/dev/null; st=$?; rm -rf \"$tmp\"; exit $st";
  return RunCommand(cmd);
}

// --- the corpus scorer's view of a report (corpus_accuracy_test.cpp, corpus_verify_test.cpp) ---

// The taxonomy ids (version 2) that a cause id is compared by.
inline const char* const kTaxonomy[] = {
    "cuda.toolkit_too_old_for_arch", "cuda.no_kernel_image", "cuda.driver_too_old",
    "lib.arch_unsupported", "cuda.oom", "host.oom_killed", "python.symbol_missing",
    "python.module_missing", "native.undefined_symbol", "native.lib_not_found", "jit.build_failed",
    "cuda.illegal_memory_access", "nccl.failure", "gpu.hardware_fault", "net.port_in_use",
    "native.crash", "engine.model_unsupported", "cuda.no_device", "python.version_conflict",
    "host.disk_full", "host.shm_exhausted", "model.load_failed", "config.invalid", "host.permission",
    "unclassified"};

inline std::string BaseId(const std::string& cause) {
  for (const char* t : kTaxonomy) {
    std::string_view tv(t);
    if (cause == tv || (cause.size() > tv.size() && cause.compare(0, tv.size(), tv) == 0 &&
                        cause[tv.size()] == '.'))
      return std::string(tv);
  }
  return cause;
}

// The ranked list of root causes as the corpus scorer builds it: incidents ordered by the score of
// their rank-1 cause; every incident's rank-1 cause in that order, then every rank-2 cause...
// Each cause id goes through `id` (BaseId to score against the taxonomy, or kept as it is).
inline std::vector<std::string> RankedCauses(const std::vector<const Json*>& incidents,
                                             std::string (*id)(const std::string&)) {
  struct Inc {
    double top;
    size_t index;
    std::vector<std::string> causes;
  };
  std::vector<Inc> incs;
  for (size_t i = 0; i < incidents.size(); ++i) {
    std::vector<const Json*> cs;
    for (const auto& c : incidents[i]->arr("causes")) cs.push_back(&c);
    std::stable_sort(cs.begin(), cs.end(),
                     [](const Json* a, const Json* b) { return a->n("rank", 99) < b->n("rank", 99); });
    Inc inc{cs.empty() ? 0.0 : cs[0]->n("score"), i, {}};
    for (const Json* c : cs) inc.causes.push_back(id(c->s("cause")));
    incs.push_back(std::move(inc));
  }
  std::stable_sort(incs.begin(), incs.end(), [](const Inc& a, const Inc& b) {
    return a.top != b.top ? a.top > b.top : a.index < b.index;
  });
  std::vector<std::string> out;
  size_t depth = 0;
  for (const auto& i : incs) depth = std::max(depth, i.causes.size());
  for (size_t r = 0; r < depth; ++r)
    for (const auto& i : incs)
      if (r < i.causes.size() && std::find(out.begin(), out.end(), i.causes[r]) == out.end())
        out.push_back(i.causes[r]);
  return out;
}

inline std::vector<std::string> RankedCauses(const Json& doc) {
  std::vector<const Json*> incidents;
  for (const auto& inc : doc.arr("incidents")) incidents.push_back(&inc);
  return RankedCauses(incidents, BaseId);
}

}  // namespace corpus_test
