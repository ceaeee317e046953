// gpu.visible: the GPUs this host has against what the log says the process saw. Verdict for
// cuda.no_device: this host has GPUs yet the process saw none (or asked for an index past them):
// `confirmed`, the devices were not given to it (CUDA_VISIBLE_DEVICES, the container's device
// list); this host, named by the log as its own, has no usable GPU at all: `confirmed` too, with
// the driver's reason (a log that does not name this host: `not_applicable`). An
// ordinal the log names that this host does have is `not_reproduced` (the process was given
// fewer devices than the host has).
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

// The device index the log asked for ("cuda:5", "device 5"), if a capture holds one.
int LoggedOrdinal(const Hypothesis& h) {
  for (const char* key : {"ordinal", "device", "requested"}) {
    const std::string v = h.Arg(key).empty() ? h.Capture(key) : h.Arg(key);
    if (!v.empty() && v.size() < 4 && std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
      return std::atoi(v.c_str());
  }
  return -1;
}

class GpuVisible final : public Verifier {
 public:
  std::string_view name() const override { return "gpu.visible"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    DriverOpen open = OpenDriver(config);
    JsonWriter w;
    w.BeginObject();
    if (!open.driver) {
      const std::string why = open.problem.Reason();
      w.Key("problem").String(why).EndObject();
      if (h.cause.empty()) return Finding::Host(HostStatus::kUnavailable, why, w.Take());
      // No driver or no device here: when the log is this host's own, the process cannot have
      // seen a GPU either; a log that does not say it is from here says nothing of this host.
      if (open.problem.problem == GpuProblem::kNoDriver || open.problem.problem == GpuProblem::kNoDevice) {
        if (h.log.names_this_host)
          return Finding::Confirmed("this host, the log's, has no usable GPU: " + why, w.Take());
        return Finding::NotApplicable("this host has no usable GPU (" + why +
                                          ") and the log does not say it ran here",
                                      w.Take());
      }
      return Finding::Inconclusive(why, w.Take());
    }
    const auto& devices = open.driver->devices;
    w.Key("devices").Uint(devices.size()).Key("names").BeginArray();
    for (const auto& d : devices) w.String(d.name);
    w.EndArray();
    const int ordinal = LoggedOrdinal(h);
    if (ordinal >= 0) w.Key("logged_ordinal").Int(ordinal);
    w.EndObject();
    const std::string here = "this host has " + std::to_string(devices.size()) + " GPU" +
                             (devices.size() == 1 ? "" : "s") +
                             (devices.empty() ? std::string() : " (" + devices[0].name + ")");
    if (h.cause.empty()) return Finding::Host(HostStatus::kPass, here, w.Take());
    if (ordinal >= 0 && size_t(ordinal) < devices.size())
      return Finding::NotReproduced(here + ", so device " + std::to_string(ordinal) +
                                        " exists here: the process was given fewer than the host has",
                                    w.Take());
    if (ordinal >= 0)
      return Finding::Confirmed(here + ": device " + std::to_string(ordinal) + " is past them", w.Take());
    return Finding::Confirmed(here + ", and the process did not see the one it asked for: the "
                              "devices were not given to it (CUDA_VISIBLE_DEVICES, the container's "
                              "device list)",
                              w.Take());
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeGpuVisible() { return std::make_unique<GpuVisible>(); }

}  // namespace triage::verifiers
