// gpu.peers: for every pair of GPUs, whether the driver allows peer access and whether a copy
// from one to the other arrives intact. Verdict for nccl.failure (and its .p2p and .timeout
// kinds): a pair that cannot copy confirms; every pair copying now is `not_reproduced` (the
// service's NCCL settings and its moment are not this check's). Peer copies say nothing of a
// shared-memory segment or a network transport (.shm, .network): inconclusive there.
#include <chrono>
#include <random>

#include "common.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {

namespace {

using namespace detail;

struct PairResult {
  int from, to;
  int can_access = 0;
  bool copied = false;
  double gb_per_s = 0;
  std::string error;
};

class GpuPeers final : public Verifier {
 public:
  std::string_view name() const override { return "gpu.peers"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    DriverOpen open = OpenDriver(config);
    if (!open.driver) return Finding::Inconclusive(open.problem.Reason());
    const Driver& driver = *open.driver;
    const DriverApi& api = driver.api;
    const int n = static_cast<int>(driver.devices.size());
    if (n < 2) {
      JsonWriter w;
      w.BeginObject().Key("gpus").Int(n).EndObject();
      return Finding::Inconclusive("no pair: " + std::to_string(n) + " GPU on this host", w.Take());
    }
    if (std::string missing = api.MissingForLaunch(); !missing.empty() || !api.cuMemcpyPeer ||
                                                      !api.cuDeviceCanAccessPeer)
      return Finding::Inconclusive("device unusable: libcuda.so.1 lacks " + missing);

    // One retained primary context per device, released at the end.
    std::vector<CUcontext> ctx(static_cast<size_t>(n), nullptr);
    for (int i = 0; i < n; ++i)
      if (api.cuDevicePrimaryCtxRetain(&ctx[static_cast<size_t>(i)], driver.devices[static_cast<size_t>(i)].handle) != kCudaSuccess)
        ctx[static_cast<size_t>(i)] = nullptr;
    const size_t bytes = 64u << 20;
    std::vector<uint32_t> pattern(bytes / 4), back(bytes / 4);
    std::mt19937 rng(std::random_device{}());
    for (auto& x : pattern) x = rng();
    std::vector<PairResult> results;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        PairResult r{i, j, 0, false, 0, {}};
        CUcontext ci = ctx[static_cast<size_t>(i)], cj = ctx[static_cast<size_t>(j)];
        api.cuDeviceCanAccessPeer(&r.can_access, driver.devices[static_cast<size_t>(i)].handle,
                                  driver.devices[static_cast<size_t>(j)].handle);
        if (!ci || !cj) {
          r.error = "no context";
          results.push_back(r);
          continue;
        }
        CUdeviceptr src = 0, dst = 0;
        api.cuCtxSetCurrent(ci);
        if (r.can_access) api.cuCtxEnablePeerAccess(cj, 0);  // may already be enabled
        CUresult e = api.cuMemAlloc(&src, bytes);
        if (e == kCudaSuccess) e = api.cuMemcpyHtoD(src, pattern.data(), bytes);
        api.cuCtxSetCurrent(cj);
        if (e == kCudaSuccess) e = api.cuMemAlloc(&dst, bytes);
        if (e == kCudaSuccess) {
          auto t0 = std::chrono::steady_clock::now();
          e = api.cuMemcpyPeer(dst, cj, src, ci, bytes);
          if (e == kCudaSuccess) e = api.cuCtxSynchronize();
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (e == kCudaSuccess) {
            r.gb_per_s = static_cast<double>(bytes) / s / 1e9;
            e = api.cuMemcpyDtoH(back.data(), dst, bytes);
          }
        }
        if (e == kCudaSuccess) {
          r.copied = back == pattern;
          if (!r.copied) r.error = "the copy arrived corrupted";
        } else {
          r.error = api.ErrorText(e);
        }
        if (dst) api.cuMemFree(dst);
        api.cuCtxSetCurrent(ci);
        if (src) api.cuMemFree(src);
        results.push_back(r);
      }
    api.cuCtxSetCurrent(nullptr);
    for (int i = 0; i < n; ++i)
      if (ctx[static_cast<size_t>(i)]) api.cuDevicePrimaryCtxRelease(driver.devices[static_cast<size_t>(i)].handle);

    JsonWriter w;
    w.BeginObject().Key("gpus").Int(n).Key("pairs").BeginArray();
    std::string bad, summary;
    int ok = 0;
    for (const auto& r : results) {
      w.BeginObject().Key("from").Int(r.from).Key("to").Int(r.to).Key("peer_access").Bool(r.can_access != 0);
      w.Key("copy_ok").Bool(r.copied);
      if (r.copied) w.Key("gb_per_s").Double(static_cast<double>(static_cast<int>(r.gb_per_s * 10)) / 10);
      if (!r.error.empty()) w.Key("error").String(r.error);
      w.EndObject();
      if (r.copied) ++ok;
      else bad += (bad.empty() ? "" : "; ") + std::to_string(r.from) + "->" + std::to_string(r.to) + ": " + r.error;
    }
    w.EndArray().EndObject();
    std::string facts = w.Take();
    summary = std::to_string(ok) + " of " + std::to_string(results.size()) +
              " directed pairs copied 64 MiB intact";
    if (h.cause.empty()) return Finding::Host(bad.empty() ? HostStatus::kPass : HostStatus::kFail, bad.empty() ? summary : summary + "; " + bad, facts);
    if (h.cause.rfind("nccl.failure.network", 0) == 0)
      return Finding::Inconclusive(summary + (bad.empty() ? "" : "; " + bad) +
                                       ": peer copies say nothing of NCCL's network transport",
                                   facts);
    if (!bad.empty()) return Finding::Confirmed(summary + "; " + bad, facts);
    return Finding::NotReproduced(summary + "; peer copies work now", facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeGpuPeers() { return std::make_unique<GpuPeers>(); }

}  // namespace triage::verifiers
