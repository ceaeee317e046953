// The shipped rule packs (rules/*.toml): they load without a fault, cover every TAXONOMY.md id,
// carry NVIDIA's figures in their knowledge tables, and their signatures recognise the messages
// of each failure class (and not the look-alike lines of healthy runs).
#include <gtest/gtest.h>

#include <algorithm>

#include <set>
#include <string>

#include "shipped_rules.h"
#include "triage/core/analyzer.h"
#include "triage/core/rules.h"

namespace {

using triage::core::LoadRules;
using triage::core::RuleSet;

std::shared_ptr<const RuleSet> Shipped() { return triage::testing::ShippedRules(); }

std::set<std::string> Hits(std::string_view text) {
  std::set<std::string> out;
  auto rules = Shipped();
  for (const auto& h : rules->MatchText(text)) out.insert(rules->signatures()[size_t(h.signature)].id);
  return out;
}

TEST(RulePacks, LoadWithoutFaults) {
  auto r = LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules"});
  ASSERT_NE(r.rules, nullptr);
  for (const auto& d : r.diagnostics) ADD_FAILURE() << d.ToString();
  EXPECT_GT(r.rules->signatures().size(), 100u);
}

TEST(RulePacks, EveryTaxonomyIdHasACause) {
  auto rules = Shipped();
  for (const char* id :
       {"cuda.toolkit_too_old_for_arch", "cuda.no_kernel_image", "cuda.driver_too_old",
        "lib.arch_unsupported", "cuda.oom", "host.oom_killed", "python.symbol_missing",
        "python.module_missing", "native.undefined_symbol", "native.lib_not_found",
        "jit.build_failed", "cuda.illegal_memory_access", "nccl.failure", "gpu.hardware_fault",
        "net.port_in_use"})
    EXPECT_GE(rules->FindCause(id), 0) << id;
}

// The figures of the knowledge tables (rules/knowledge.toml names the NVIDIA documents).
TEST(RulePacks, KnowledgeTables) {
  auto rules = Shipped();
  auto required = [&](std::map<std::string, std::string> caps) {
    triage::core::CompleteCaptures(*rules, caps);
    return caps["required"];
  };
  EXPECT_EQ(required({{"sm", "sm_90"}}), "11.8");
  EXPECT_EQ(required({{"sm", "120"}}), "12.8");
  EXPECT_EQ(required({{"sm", "sm_100a"}}), "12.8");
  EXPECT_EQ(required({{"sm", "sm_103"}}), "12.9");
  EXPECT_EQ(required({{"sm", "sm_121a"}}), "12.9");
  EXPECT_EQ(required({{"sm", "110"}}), "13.0");
  EXPECT_EQ(required({{"sm", "compute_86"}}), "11.1");
  EXPECT_EQ(required({{"sm", "87"}}), "11.4");
  EXPECT_EQ(required({{"sm", "89"}}), "11.8");
  EXPECT_EQ(required({{"sm", "80"}}), "11.0");
  EXPECT_EQ(required({{"sm", "75"}}), "10.0");
  EXPECT_EQ(required({{"sm", "70"}}), "9.0");
  // FlashInfer's JIT states its own, higher minimum for the SM 12.x family.
  EXPECT_EQ(required({{"sm", "120"}, {"library", "FlashInfer"}}), "12.9");
  // Products to architectures.
  auto sm_of = [&](const char* gpu) {
    std::map<std::string, std::string> caps{{"gpu", gpu}};
    triage::core::CompleteCaptures(*rules, caps);
    return caps["sm"];
  };
  EXPECT_EQ(sm_of("NVIDIA RTX PRO 6000 Blackwell Server Edition"), "120");
  EXPECT_EQ(sm_of("NVIDIA GeForce RTX 5090"), "120");
  EXPECT_EQ(sm_of("NVIDIA B200"), "100");
  EXPECT_EQ(sm_of("NVIDIA GB10"), "121");
  EXPECT_EQ(sm_of("NVIDIA Jetson AGX Thor"), "110");
  EXPECT_EQ(sm_of("NVIDIA H200"), "90");
  EXPECT_EQ(sm_of("NVIDIA A100-SXM4-80GB"), "80");
  EXPECT_EQ(sm_of("NVIDIA GeForce RTX 3090"), "86");
  EXPECT_EQ(sm_of("NVIDIA L40S"), "89");
  EXPECT_EQ(sm_of("Tesla T4"), "75");
  EXPECT_EQ(sm_of("Tesla V100-PCIE-16GB"), "70");
  // Minimum driver per CUDA major.
  auto driver = [&](const char* cuda) {
    std::map<std::string, std::string> caps{{"cuda", cuda}};
    triage::core::CompleteCaptures(*rules, caps);
    return caps["min_driver"];
  };
  EXPECT_EQ(driver("12.8"), "525");
  EXPECT_EQ(driver("13.0"), "580");
}

struct Case {
  const char* text;
  const char* signature;
};

// One line per message variant of each failure class.
TEST(RulePacks, SignaturesRecogniseTheFailureClasses) {
  const Case cases[] = {
      {"Failed to get device capability: SM 12.x requires CUDA >= 12.9.", "cuda.sm_family_needs_cuda"},
      {"RuntimeError: No supported CUDA architectures found for major versions [9, 10].", "cuda.no_arch_for_major"},
      {"nvcc fatal   : Unsupported gpu architecture 'compute_120'", "nvcc.unsupported_arch"},
      {"nvcc fatal   : Unsupported gpu architecture 'compute_100a'", "nvcc.unsupported_arch"},
      {"nvcc fatal : Value 'sm_121' is not defined for option 'gpu-architecture'", "nvcc.unsupported_arch_value"},
      {"ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'", "ptxas.unknown_arch"},
      {"ptxas /tmp/x.ptx, line 6; error   : PTX .version 8.4 does not support .target sm_120a", "ptxas.ptx_version_too_old"},
      {"clang: error: unsupported CUDA gpu architecture: sm_120", "clang.unsupported_cuda_arch"},
      {"ValueError: Unknown CUDA arch (12.0) or GPU not supported", "torch.cuda_arch_list_too_new"},
      {"RuntimeError: CUDA error: no kernel image is available for execution on the device", "cuda.no_kernel_image"},
      {"NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.", "torch.arch_not_compatible"},
      {"RuntimeError: The NVIDIA driver on your system is too old (found version 11040).", "cuda.driver_too_old_torch"},
      {"RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", "cuda.driver_insufficient"},
      {"Error 804: forward compatibility was attempted on non supported HW", "cuda.driver_compat_error"},
      {"Error 803: system has unsupported display driver / cuda driver combination", "cuda.driver_compat_error"},
      {"ImportError: /x/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy", "native.undefined_driver_symbol"},
      {"CUDA error: the provided PTX was compiled with an unsupported toolchain.", "cuda.ptx_unsupported_toolchain"},
      {"RuntimeError: FlashInfer requires GPUs with sm75 or higher", "lib.flashinfer_arch_gate"},
      {"RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "lib.flash_attn_arch_gate"},
      {"ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 90. Current capability: 86.", "lib.min_capability_gate"},
      {"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.", "lib.capability_at_least"},
      {"This kernel only supports sm120.", "lib.kernel_arch_guard"},
      {"ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")", "lib.triton_dtype_arch"},
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.", "cuda.oom"},
      {"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cuda.cublas_alloc_failed"},
      {"ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664).", "cuda.kv_cache_too_small"},
      {"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", "cuda.kv_cache_too_small"},
      {"Out of memory: Killed process 14210 (python) total-vm:18109076kB, anon-rss:14095848kB", "host.oom_killed_process"},
      {"Memory cgroup out of memory: Killed process 4242 (pt_main_thread) total-vm:1kB", "host.oom_killed_process"},
      {"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x,mems_allowed=0,oom_memcg=/kubepods/burstable/pod1f2e/abc,task_memcg=/kubepods/burstable/pod1f2e/abc,task=python,pid=4242,uid=0", "host.oom_memcg_limit"},
      {"python invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0", "host.oom_invoked"},
      {"ollama.service: A process of this unit has been killed by the OOM killer.", "host.systemd_oom"},
      {"1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons", "host.ray_memory_monitor"},
      {"ImportError: cannot import name 'current_compilation_context' from 'flashinfer.jit.env' (/x/env.py)", "python.import_name"},
      {"AttributeError: module 'torch.library' has no attribute 'register_fake'", "python.module_no_attribute"},
      {"ModuleNotFoundError: No module named 'sgl_kernel'", "python.module_not_found"},
      {"ImportError: /x/flash_attn_2_cuda.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationE", "native.undefined_symbol"},
      {"ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /x/_C.so)", "native.version_not_found"},
      {"ImportError: libcudart.so.13: cannot open shared object file: No such file or directory", "native.cannot_open_shared_object"},
      {"OSError: libnvrtc.so.12: cannot open shared object file: No such file or directory", "native.cannot_open_shared_object"},
      {"RuntimeError: Ninja build failed. Ninja output:", "jit.ninja_failed"},
      {"ninja: build stopped: subcommand failed.", "jit.ninja_stopped"},
      {"OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "jit.cuda_home_unset"},
      {"/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found", "jit.nvcc_missing"},
      {"RuntimeError: Failed to find C compiler. Please specify via CC environment variable.", "jit.c_compiler_missing"},
      {"RuntimeError: CUDA error: an illegal memory access was encountered", "cuda.illegal_memory_access"},
      {"RuntimeError: CUDA error: device-side assert triggered", "cuda.device_assert"},
      {"/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [1,0,0], thread: [5,0,0] Assertion `idx < n` failed.", "cuda.kernel_assert_line"},
      {"torch.AcceleratorError: CUDA error: unspecified launch failure", "cuda.launch_failure"},
      {"[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)", "nccl.watchdog_timeout"},
      {"torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error", "nccl.dist_backend_error"},
      {"Error while creating shared memory segment /dev/shm/nccl-Wq8ZkP (size 9637888)", "nccl.shm_error"},
      {"Failed: Cuda error /x/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'", "nccl.p2p_unsupported"},
      {"host:1:2 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with status=12 opcode=0", "nccl.ib_completion_error"},
      {"[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.", "gpu.xid"},
      {"RuntimeError: CUDA error: uncorrectable ECC error encountered", "gpu.ecc_uncorrectable"},
      {"ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 5000): address already in use", "net.errno98_bind"},
      {"torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use", "net.eaddrinuse"},
      {"RuntimeError: Address already in use", "net.address_in_use"},
  };
  for (const auto& c : cases) EXPECT_TRUE(Hits(c.text).count(c.signature)) << c.signature << " on: " << c.text;
}

// Lines of healthy runs that look alarming: they must name no cause.
TEST(RulePacks, LookAlikesOfHealthyRunsNameNoCause) {
  const char* const benign[] = {
      "WARNING 08-14 19:21:09 [_custom_ops.py:20] Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")",
      "Error caught was: No module named 'triton'",
      "No module named 'vllm._version'",
      "- ModuleNotFoundError: No module named 'common_ops'",
      "host:30412:30412 [0] NCCL WARN NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation",
      "ws-gpu2:30412:30412 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
      "(InferenceServer pid=52010) WARNING 04-24 01:50:53 [layerwise.py:230] MMEncoderAttention: Failed to load weights",
      "[2025-06-01 00:00:01 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1",
      "WARNING 06-01 00:00:01 [scheduler.py:1537] Sequence group 98183 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance.",
      "(APIServer pid=1) INFO 06-01 00:00:01 [logger.py:43] Received request x: prompt: 'my log says NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus. what now?'",
  };
  auto rules = Shipped();
  for (const char* line : benign) {
    // A line with a benign hit shows its process at work: the analyzer drops its other hits
    // (a logged prompt that quotes an Xid, NCCL's plugin probe falling back).
    const auto hits = rules->MatchText(line);
    if (std::any_of(hits.begin(), hits.end(), [&](const auto& h) {
          return rules->signatures()[size_t(h.signature)].benign;
        }))
      continue;
    for (const auto& h : hits) {
      const auto& s = rules->signatures()[size_t(h.signature)];
      EXPECT_FALSE(s.fatal) << s.id << " fatal on: " << line;
      for (const auto& c : rules->causes())
        for (const auto& id : c.requires_any)
          EXPECT_NE(id, s.id) << s.id << " (supports " << c.id << ") on: " << line;
    }
  }
}

}  // namespace
