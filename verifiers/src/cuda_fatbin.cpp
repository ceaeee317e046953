// cuda.fatbin: the SASS and PTX architectures embedded in a named ELF shared object, read from
// its .nv_fatbin entry headers by triage itself. Verdict for cuda.no_kernel_image: no SASS the
// device can run (same major, minor not above the device's) and no PTX at or below its
// architecture for the driver to JIT.
#include <sys/stat.h>

#include <cerrno>

#include "common.h"
#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/binary.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

std::string List(const std::vector<int>& archs, const char* prefix) {
  std::string s;
  for (int a : archs) {
    if (!s.empty()) s += ", ";
    s += prefix;
    s += std::to_string(a);
  }
  return s.empty() ? "none" : s;
}

void WriteArchs(JsonWriter& w, const char* key, const std::vector<int>& archs) {
  w.Key(key).BeginArray();
  for (int a : archs) w.Int(a);
  w.EndArray();
}

class CudaFatbin final : public Verifier {
 public:
  std::string_view name() const override { return "cuda.fatbin"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    std::string path;
    for (const char* key : {"library", "path", "file"})
      if (!h.Arg(key).empty()) path = h.Arg(key);
    struct stat st {};
    if (!h.cause.empty() && !path.empty() && path[0] == '/' && ::stat(path.c_str(), &st) != 0 && errno == ENOENT)
      return Finding::NotApplicable("the log's " + path + " is not on this host");

    std::vector<FatbinEntry> entries;
    std::string what;
    if (path.empty()) {
      if (!h.cause.empty())
        return Finding::Inconclusive("the log names no library to read");
      // doctor: triage's own kernels.
      if (!kernels::HavePrebuilt() || !config.use_prebuilt_kernels)
        return Finding::Inconclusive(GpuProblemText(GpuProblem::kBuiltWithoutKernels));
      auto parsed = ParseFatbin(kernels::PrebuiltImage());
      if (!parsed.ok()) return Finding::Host(HostStatus::kFail, parsed.status().message(), "{}");
      entries = std::move(parsed.value());
      what = "triage's kernels";
    } else {
      if (path[0] != '/') return Finding::Inconclusive("not an absolute path: " + path);
      auto parsed = ReadElfFatbin(path);
      if (!parsed.ok()) {
        if (parsed.status().message().find("Permission denied") != std::string::npos)
          return Finding::Inconclusive("permission: " + parsed.status().message());
        return Finding::Inconclusive(parsed.status().message());
      }
      entries = std::move(parsed.value());
      what = path;
    }
    std::vector<int> sass = Architectures(entries, FatbinEntry::Kind::kSass);
    std::vector<int> ptx = Architectures(entries, FatbinEntry::Kind::kPtx);
    size_t compressed = 0;
    for (const auto& e : entries) compressed += e.compressed;

    int device_arch = 0;
    std::string device_note;
    std::string arch_text = h.Arg("arch").empty() ? h.Arg("sm") : h.Arg("arch");
    // The device the log names, when it names one exactly, before this machine's.
    for (const auto& a : h.log.archs)
      if (arch_text.empty() && !a.family) arch_text = "sm_" + std::to_string(a.arch);
    if (!arch_text.empty()) {
      device_arch = ParseArch(arch_text);
    } else {
      DriverOpen open = OpenDriver(config);
      if (open.driver && !open.driver->devices.empty()) device_arch = open.driver->devices[0].arch();
      else device_note = open.problem.Reason();
    }

    JsonWriter w;
    w.BeginObject().Key("file").String(what).Key("entries").Uint(entries.size());
    w.Key("compressed_entries").Uint(compressed);
    WriteArchs(w, "sass", sass);
    WriteArchs(w, "ptx", ptx);
    if (device_arch) w.Key("device_arch").String("sm_" + std::to_string(device_arch));
    if (!device_note.empty()) w.Key("device").String(device_note);
    bool sass_runs = false, ptx_jits = false;
    for (int a : sass) sass_runs |= a / 10 == device_arch / 10 && a % 10 <= device_arch % 10;
    for (int a : ptx) ptx_jits |= a <= device_arch;
    if (device_arch) w.Key("sass_runs").Bool(sass_runs).Key("ptx_jits").Bool(ptx_jits);
    w.EndObject();
    std::string facts = w.Take();
    std::string listing = what + ": SASS " + List(sass, "sm_") + "; PTX " + List(ptx, "compute_");

    if (h.cause.empty()) {
      if (device_arch && !sass_runs && !ptx_jits)
        return Finding::Host(HostStatus::kFail, listing + "; nothing for the device's sm_" + std::to_string(device_arch), facts);
      return Finding::Host(HostStatus::kPass, listing, facts);
    }
    if (entries.empty())
      return Finding::Confirmed(what + " has no .nv_fatbin entries: no kernel image for any GPU", facts);
    if (!device_arch)
      return Finding::Inconclusive("no device architecture to compare with (" + device_note + "); " + listing, facts);
    std::string dev = "sm_" + std::to_string(device_arch);
    if (sass_runs || ptx_jits)
      return Finding::Refuted(listing + ": " + (sass_runs ? "SASS" : "PTX") + " usable on " + dev, facts);
    return Finding::Confirmed(listing + ": nothing usable on " + dev, facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeCudaFatbin() { return std::make_unique<CudaFatbin>(); }

}  // namespace triage::verifiers
