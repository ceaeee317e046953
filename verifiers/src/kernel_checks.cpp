// Host side of triage's kernels: inputs, launches through the driver API, comparison with the
// CPU references of triage::kernels.
#include "triage/verifiers/detail/kernel_checks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "common.h"
#include "triage/json.h"
#include "triage/kernels/kernels.h"

namespace triage::verifiers::detail {

namespace {

struct Launcher {
  const DriverApi& api;
  CUmodule module;
  std::string error;

  // Launches `name` and waits for it; false (and error set) on failure.
  bool Run(const char* name, unsigned gx, unsigned gy, unsigned block, unsigned shared,
           std::vector<void*> params) {
    CUfunction fn = nullptr;
    CUresult r = api.cuModuleGetFunction(&fn, module, name);
    if (r != kCudaSuccess) {
      error = std::string("cuModuleGetFunction(") + name + "): " + api.ErrorText(r);
      return false;
    }
    r = api.cuLaunchKernel(fn, gx, gy, 1, block, 1, 1, shared, nullptr, params.data(), nullptr);
    if (r != kCudaSuccess) {
      error = std::string("cuLaunchKernel(") + name + "): " + api.ErrorText(r);
      return false;
    }
    r = api.cuCtxSynchronize();
    if (r != kCudaSuccess) {
      error = std::string(name) + ": " + api.ErrorText(r);
      return false;
    }
    return true;
  }
};

bool Upload(const DriverApi& api, const DeviceBuffer& buf, const void* src, size_t n,
            std::string& error) {
  CUresult r = api.cuMemcpyHtoD(buf.get(), src, n);
  if (r != kCudaSuccess) error = "cuMemcpyHtoD: " + api.ErrorText(r);
  return r == kCudaSuccess;
}

bool Download(const DriverApi& api, void* dst, const DeviceBuffer& buf, size_t n,
              std::string& error) {
  CUresult r = api.cuMemcpyDtoH(dst, buf.get(), n);
  if (r != kCudaSuccess) error = "cuMemcpyDtoH: " + api.ErrorText(r);
  return r == kCudaSuccess;
}

// A buffer that could not be had because the device is full (a service holds its memory) is not
// a fault of the GPU: the check is marked not run, and says why.
bool Allocated(const DriverApi& api, const DeviceBuffer& buf, KernelCheck& check) {
  if (buf.status() == kCudaSuccess) return true;
  check.not_run = buf.status() == kCudaErrorOutOfMemory;
  check.detail = (check.not_run ? "not run: out of device memory (cuMemAlloc of " : "cuMemAlloc of ") +
                 ByteSizeText(buf.size()) + ": " + api.ErrorText(buf.status()) + ")";
  return false;
}

KernelCheck Smoke(const DriverApi& api, CUmodule module, std::mt19937& rng) {
  KernelCheck c{"smoke", false, "", 0, 0, false};
  const unsigned n = 1u << 20;
  std::vector<uint32_t> a(n), b(n), got(n), want(n);
  for (auto& x : a) x = rng();
  for (auto& x : b) x = rng();
  unsigned mul = rng() | 1u;
  kernels::SmokeReference(a, b, mul, want);
  DeviceBuffer da(api, n * 4), db(api, n * 4), dout(api, n * 4);
  std::string& err = c.detail;
  if (!Allocated(api, da, c) || !Allocated(api, db, c) || !Allocated(api, dout, c)) return c;
  if (!Upload(api, da, a.data(), n * 4, err) || !Upload(api, db, b.data(), n * 4, err)) return c;
  Launcher l{api, module, {}};
  CUdeviceptr pa = da.get(), pb = db.get(), po = dout.get();
  unsigned count = n;
  if (!l.Run("triage_smoke", (n + 255) / 256, 1, 256, 0, {&pa, &pb, &po, &count, &mul})) {
    err = l.error;
    return c;
  }
  if (!Download(api, got.data(), dout, n * 4, err)) return c;
  for (unsigned i = 0; i < n; ++i) c.mismatches += got[i] != want[i];
  c.ok = c.mismatches == 0;
  c.figure = n;
  err = std::to_string(n) + " words, " + std::to_string(c.mismatches) + " differ";
  return c;
}

KernelCheck MemoryPattern(const DriverApi& api, CUmodule module, std::mt19937& rng) {
  KernelCheck c{"memory_pattern", false, "", 0, 0, false};
  const unsigned long long n = 64ull << 20;  // words: 256 MiB
  std::string& err = c.detail;
  DeviceBuffer buf(api, n * 4), errors(api, 8);
  if (!Allocated(api, buf, c) || !Allocated(api, errors, c)) return c;
  Launcher l{api, module, {}};
  std::vector<uint32_t> host(n);
  uint64_t device_errors = 0, host_errors = 0;
  for (int invert = 0; invert < 2; ++invert) {
    unsigned seed = rng();
    CUdeviceptr pb = buf.get(), pe = errors.get();
    unsigned long long count = n;
    if (api.cuMemsetD8(pe, 0, 8) != kCudaSuccess) {
      err = "cuMemsetD8 failed";
      return c;
    }
    if (!l.Run("triage_pattern_write", 1024, 1, 256, 0, {&pb, &count, &seed, &invert}) ||
        !l.Run("triage_pattern_check", 1024, 1, 256, 0, {&pb, &count, &seed, &invert, &pe})) {
      err = l.error;
      return c;
    }
    unsigned long long found = 0;
    if (!Download(api, &found, errors, 8, err)) return c;
    device_errors += found;
    if (!Download(api, host.data(), buf, n * 4, err)) return c;
    for (unsigned long long i = 0; i < n; ++i)
      host_errors += host[i] != kernels::PatternWord(i, seed, invert != 0);
  }
  c.mismatches = device_errors + host_errors;
  c.ok = c.mismatches == 0;
  c.figure = static_cast<double>(n * 4);
  err = "256 MiB written and read back twice (pattern, complement): " +
        std::to_string(device_errors) + " bad words on the device, " +
        std::to_string(host_errors) + " against the CPU reference";
  return c;
}

KernelCheck Bandwidth(const DriverApi& api, CUmodule module, std::mt19937& rng) {
  KernelCheck c{"bandwidth", false, "", 0, 0, false};
  const unsigned long long bytes = 256ull << 20;
  const unsigned long long words = bytes / 16;
  std::string& err = c.detail;
  DeviceBuffer src(api, bytes), dst(api, bytes);
  if (!Allocated(api, src, c) || !Allocated(api, dst, c)) return c;
  // A cheap generator for 256 MiB (mt19937 would cost a second here); seeded from rng.
  std::vector<uint32_t> host(bytes / 4);
  uint64_t state = (static_cast<uint64_t>(rng()) << 32) | rng();
  for (auto& x : host) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<uint32_t>(state >> 32);
  }
  if (!Upload(api, src, host.data(), bytes, err)) return c;
  Launcher l{api, module, {}};
  CUdeviceptr ps = src.get(), pd = dst.get();
  unsigned long long count = words;
  unsigned grid = 132 * 8;
  if (!l.Run("triage_copy", grid, 1, 512, 0, {&ps, &pd, &count})) {  // warm-up
    err = l.error;
    return c;
  }
  const int iterations = 20;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i)
    if (!l.Run("triage_copy", grid, 1, 512, 0, {&ps, &pd, &count})) {
      err = l.error;
      return c;
    }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<uint32_t> back(bytes / 4);
  if (!Download(api, back.data(), dst, bytes, err)) return c;
  c.mismatches = 0;
  for (size_t i = 0; i < back.size(); ++i) c.mismatches += back[i] != host[i];
  c.figure = 2.0 * static_cast<double>(bytes) * iterations / seconds / 1e9;
  c.ok = c.mismatches == 0;
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%.1f GB/s (read + write, 256 MiB copied %d times, each launch waited for); %llu "
                "words differ",
                c.figure, iterations, static_cast<unsigned long long>(c.mismatches));
  err = buf;
  return c;
}

KernelCheck Sampling(const DriverApi& api, CUmodule module, std::mt19937& rng) {
  KernelCheck c{"topk_topp_sampling", false, "", 0, 0, false};
  const int rows = 256;
  std::uniform_int_distribution<int> vocab_dist(100, 4096);
  const int vocab = vocab_dist(rng);
  int pow2 = 1;
  while (pow2 < vocab) pow2 <<= 1;
  std::vector<float> probs(static_cast<size_t>(rows) * vocab), uniforms(rows);
  std::vector<int> ks(rows);
  std::vector<float> ps(rows);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::string& err = c.detail;
  // One k and p per launch (the kernel's interface, like the libraries'); several launches, the
  // first without top-k and the second without top-p.
  const int settings = 8;
  uint64_t compared = 0, ambiguous = 0;
  DeviceBuffer dprobs(api, probs.size() * 4), duni(api, rows * 4), dtok(api, rows * 4);
  if (!Allocated(api, dprobs, c) || !Allocated(api, duni, c) || !Allocated(api, dtok, c))
    return c;
  Launcher l{api, module, {}};
  for (int s = 0; s < settings; ++s) {
    for (int r = 0; r < rows; ++r) {
      float sum = 0;
      float* row = &probs[static_cast<size_t>(r) * vocab];
      // Peaked rows (a power of a uniform) look like real next-token distributions; some ties.
      for (int v = 0; v < vocab; ++v) {
        float x = unit(rng);
        row[v] = (v % 97 == 5) ? 0.25f : x * x * x * x;
        sum += row[v];
      }
      for (int v = 0; v < vocab; ++v) row[v] /= sum;
      uniforms[r] = unit(rng);
    }
    int k = s == 0 ? vocab : std::uniform_int_distribution<int>(1, std::min(vocab, 200))(rng);
    float p = s == 1 ? 1.0f : std::uniform_real_distribution<float>(0.05f, 0.99f)(rng);
    if (!Upload(api, dprobs, probs.data(), probs.size() * 4, err) ||
        !Upload(api, duni, uniforms.data(), rows * 4, err))
      return c;
    CUdeviceptr pp = dprobs.get(), pu = duni.get(), pt = dtok.get();
    int v = vocab, w = pow2;
    if (!l.Run("triage_topk_topp_sample", rows, 1, 1024, static_cast<unsigned>(pow2 * 8),
               {&pp, &v, &w, &k, &p, &pu, &pt})) {
      err = l.error;
      return c;
    }
    std::vector<int> tokens(rows);
    if (!Download(api, tokens.data(), dtok, rows * 4, err)) return c;
    for (int r = 0; r < rows; ++r) {
      auto want = kernels::SampleTopKTopP(
          std::span<const float>(&probs[static_cast<size_t>(r) * vocab], vocab), k, p,
          uniforms[r]);
      ++compared;
      if (tokens[r] == want.token) continue;
      if (want.margin < kernels::kSamplingTolerance)
        ++ambiguous;
      else
        ++c.mismatches;
    }
  }
  c.ok = c.mismatches == 0;
  c.figure = static_cast<double>(compared);
  err = std::to_string(compared) + " rows (vocabulary " + std::to_string(vocab) + ", " +
        std::to_string(settings) + " top-k/top-p settings): " + std::to_string(c.mismatches) +
        " tokens differ from the CPU reference, " + std::to_string(ambiguous) +
        " differ within 1e-5 of a threshold (not counted)";
  return c;
}

KernelCheck Wmma(const DriverApi& api, CUmodule module, const Device& device, std::mt19937& rng) {
  KernelCheck c{"wmma_gemm", false, "", 0, 0, false};
  std::string& err = c.detail;
  if (device.arch() < 70) {
    err = "tensor cores need sm_70 or newer";
    return c;
  }
  const int m = 128, n = 64, k = 256;
  std::vector<uint16_t> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k);
  // Values k/16 for small integers k are exact in binary16, so only the summation order differs.
  std::uniform_int_distribution<int> small(-32, 32);
  for (auto& x : a) x = kernels::HalfBits(static_cast<float>(small(rng)) / 16.0f);
  for (auto& x : b) x = kernels::HalfBits(static_cast<float>(small(rng)) / 16.0f);
  std::vector<float> want(static_cast<size_t>(m) * n), got(want.size());
  kernels::MatmulReference(a, b, m, n, k, want);
  DeviceBuffer da(api, a.size() * 2), db(api, b.size() * 2), dc(api, got.size() * 4);
  if (!Allocated(api, da, c) || !Allocated(api, db, c) || !Allocated(api, dc, c)) return c;
  if (!Upload(api, da, a.data(), a.size() * 2, err) || !Upload(api, db, b.data(), b.size() * 2, err))
    return c;
  Launcher l{api, module, {}};
  CUdeviceptr pa = da.get(), pb = db.get(), pc = dc.get();
  int mm = m, nn = n, kk = k;
  if (!l.Run("triage_wmma_gemm", n / 16, m / 16, 32, 0, {&pa, &pb, &pc, &mm, &nn, &kk})) {
    err = l.error;
    return c;
  }
  if (!Download(api, got.data(), dc, got.size() * 4, err)) return c;
  double max_err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double e = std::abs(static_cast<double>(got[i]) - want[i]);
    max_err = std::max(max_err, e);
    // Products of k/16 values are multiples of 1/256, their sums exact in f32 at these sizes.
    if (e > 1e-3) ++c.mismatches;
  }
  c.figure = max_err;
  c.ok = c.mismatches == 0;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%dx%dx%d f16 -> f32: %llu elements off, max |error| %.3g", m, n,
                k, static_cast<unsigned long long>(c.mismatches), max_err);
  err = buf;
  return c;
}

}  // namespace

bool KernelRun::AllOk() const {
  if (!loaded || checks.empty()) return false;
  size_t ran = 0;
  for (const auto& c : checks) {
    if (c.not_run) continue;
    if (!c.ok) return false;
    ++ran;
  }
  return ran > 0;
}

KernelRun RunKernelChecks(const Driver& driver, const Device& device, const void* image,
                          uint32_t seed, const std::vector<std::string>& kernels) {
  KernelRun run;
  const DriverApi& api = driver.api;
  if (std::string missing = api.MissingForLaunch(); !missing.empty()) {
    run.load_error = "libcuda.so.1 lacks " + missing;
    return run;
  }
  PrimaryContext ctx(api, device.handle);
  if (ctx.status() != kCudaSuccess) {
    run.load_error = "cuDevicePrimaryCtxRetain: " + api.ErrorText(ctx.status());
    return run;
  }
  Module module(api, image);
  if (module.status() != kCudaSuccess) {
    run.load_error = "cuModuleLoadData: " + api.ErrorText(module.status());
    return run;
  }
  run.loaded = true;
  std::mt19937 rng(seed);
  auto wanted = [&](const char* name) {
    return kernels.empty() || std::find(kernels.begin(), kernels.end(), name) != kernels.end();
  };
  if (wanted("smoke")) run.checks.push_back(Smoke(api, module.get(), rng));
  if (wanted("memory_pattern")) run.checks.push_back(MemoryPattern(api, module.get(), rng));
  if (wanted("bandwidth")) run.checks.push_back(Bandwidth(api, module.get(), rng));
  if (wanted("topk_topp_sampling")) run.checks.push_back(Sampling(api, module.get(), rng));
  if (wanted("wmma_gemm")) run.checks.push_back(Wmma(api, module.get(), device, rng));
  return run;
}

std::string KernelRunJson(const KernelRun& run) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& c : run.checks) {
    w.BeginObject().Key("kernel").String(c.kernel).Key("ok").Bool(c.ok);
    if (c.not_run) w.Key("not_run").Bool(true);
    w.Key("mismatches").Uint(c.mismatches).Key("detail").String(c.detail);
    if (c.kernel == "bandwidth") w.Key("gb_per_s").Double(std::round(c.figure * 10) / 10);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

}  // namespace triage::verifiers::detail
