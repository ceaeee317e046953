// Hand-checked diagnoses of corpus logs: for each, the root cause, its symptoms and the lines of
// the key evidence, as read in the log itself (grep -n), independent of what the engine printed.
// Finer cause ids are accepted for a taxonomy id ("cuda.toolkit_too_old_for_arch.ptxas").
#include <gtest/gtest.h>

#include <set>

#include "corpus_json.h"

namespace corpus_test {
namespace {

bool IsId(const std::string& cause, const std::string& base) {
  return cause == base || (cause.size() > base.size() && cause.compare(0, base.size(), base) == 0 &&
                           cause[base.size()] == '.');
}

std::set<int> Lines(const Json& holder) {
  std::set<int> out;
  for (const auto& e : holder.arr("evidence")) out.insert(int(e.n("line")));
  return out;
}

struct SymptomSpec {
  std::string cause;
  std::set<int> lines;  // must all be among the symptom's evidence
};

struct CauseSpec {
  std::string cause;
  int rank = 1;                    // rank within its incident (0: any rank)
  std::set<int> lines;             // must all be among the cause's evidence
  std::vector<SymptomSpec> symptoms;
  std::map<std::string, std::string> captures;
};

struct CaseSpec {
  std::string id;
  std::vector<CauseSpec> causes;  // empty: the log must give no incident
};

// Finds `spec.cause` among the root causes of the report; returns nullptr when absent.
const Json* FindRoot(const Json& doc, const std::string& cause, const Json** incident) {
  for (const auto& inc : doc.arr("incidents"))
    for (const auto& c : inc.arr("causes"))
      if (IsId(c.s("cause"), cause)) {
        *incident = &inc;
        return &c;
      }
  return nullptr;
}

void Check(const CaseSpec& spec) {
  SCOPED_TRACE(spec.id);
  RunResult r = Analyze("tests/data/corpus/cases/" + spec.id + ".log", true);
  ASSERT_EQ(r.status, 0);
  Json doc = ParseJson(r.out);
  if (spec.causes.empty()) {
    EXPECT_TRUE(doc.arr("incidents").empty()) << r.out;
    return;
  }
  for (const auto& cs : spec.causes) {
    SCOPED_TRACE(cs.cause);
    const Json* inc = nullptr;
    const Json* c = FindRoot(doc, cs.cause, &inc);
    ASSERT_NE(c, nullptr) << "not a root cause: " << r.out;
    if (cs.rank > 0) {
      EXPECT_EQ(int(c->n("rank")), cs.rank);
    }
    const std::set<int> have = Lines(*c);
    for (int l : cs.lines) EXPECT_TRUE(have.count(l)) << "evidence line " << l << " missing";
    for (const auto& [k, v] : cs.captures) {
      const Json* caps = c->get("captures");
      ASSERT_NE(caps, nullptr);
      EXPECT_EQ(caps->s(k), v) << "capture " << k;
    }
    for (const auto& ss : cs.symptoms) {
      const Json* found = nullptr;
      for (const auto& s : c->arr("symptoms"))
        if (IsId(s.s("cause"), ss.cause)) found = &s;
      ASSERT_NE(found, nullptr) << ss.cause << " not a symptom of " << cs.cause;
      const std::set<int> sl = Lines(*found);
      for (int l : ss.lines) EXPECT_TRUE(sl.count(l)) << ss.cause << " evidence line " << l << " missing";
      // A symptom is never also a root cause of the same incident.
      for (const auto& other : inc->arr("causes"))
        EXPECT_FALSE(IsId(other.s("cause"), ss.cause)) << ss.cause << " is listed as a root cause too";
    }
  }
}

// vllm-50705: RTX 5090, CUDA_HOME=cuda-12.8; FlashInfer's probe says SM 12.x needs 12.9 (lines
// 19-20), then its JIT gate raises "requires GPUs with sm75 or higher" (91, 154): the toolkit is
// the cause, the gate its symptom.
TEST(CorpusCases, Vllm50705ToolkitTooOldForFlashInfer) {
  Check({"vllm-50705",
         {{"cuda.toolkit_too_old_for_arch", 1, {19, 20},
           {{"lib.arch_unsupported", {91, 154}}}, {{"sm", "12.x"}, {"required", "12.9"}}}}});
}

// triton-8539: GB10; Triton's bundled ptxas rejects sm_121a (28); the PTXASError (26) follows.
TEST(CorpusCases, Triton8539BundledPtxasTooOld) {
  Check({"triton-8539",
         {{"cuda.toolkit_too_old_for_arch", 1, {28}, {{"jit.build_failed", {26}}}, {{"sm", "121"}}}}});
}

// PyTorch-Encoding-383: nvcc 11.0 cannot target compute_86 (19, 22); ninja stops (23). The
// knowledge table gives 11.1 as sm_86's first toolkit.
TEST(CorpusCases, PyTorchEncoding383Nvcc110OnRtx3090) {
  Check({"PyTorch-Encoding-383",
         {{"cuda.toolkit_too_old_for_arch", 1, {19, 22}, {{"jit.build_failed", {23}}},
           {{"sm", "86"}, {"required", "11.1"}}}}});
}

// sglang-8432: driver 535 lacks the green-context driver API: undefined symbol cuGreenCtxDestroy
// (34) is a driver gap, not an ABI mismatch.
TEST(CorpusCases, Sglang8432DriverApiSymbolMissing) {
  Check({"sglang-8432",
         {{"cuda.driver_too_old", 1, {34}, {{"native.undefined_symbol", {34}}},
           {{"symbol", "cuGreenCtxDestroy"}}}}});
}

// vllm-4327: fp8 needs capability 90, the A6000 is 86 (27, 63, 65).
TEST(CorpusCases, Vllm4327Fp8GatedOnSm86) {
  Check({"vllm-4327",
         {{"lib.arch_unsupported", 1, {27, 63}, {}, {{"min_cap", "90"}, {"cap", "86"}, {"method", "fp8"}}}}});
}

// spark-vllm-docker-143: an sm120-only CUTLASS kernel traps on sm_121 ("This kernel only
// supports sm120." from 35), surfacing as "unspecified launch failure" (107, 150).
TEST(CorpusCases, SparkVllmDocker143KernelGuard) {
  Check({"spark-vllm-docker-143",
         {{"lib.arch_unsupported", 1, {35}, {{"cuda.illegal_memory_access", {107, 150}}}, {{"only", "120"}}}}});
}

// textgen-440: "Killed" (10), then dmesg: oom-killer invoked (14), oom-kill (37), Killed process
// 14210 (38).
TEST(CorpusCases, Textgen440KernelOomKill) {
  Check({"textgen-440", {{"host.oom_killed", 1, {14, 38}, {}, {{"pid", "14210"}}}}});
}

// accelerate-508: the rendezvous port is taken (21); the NCCL "unhandled system error" on the
// other rank (31) is its consequence.
TEST(CorpusCases, Accelerate508PortCollisionExplainsNccl) {
  Check({"accelerate-508", {{"net.port_in_use", 1, {21}, {{"nccl.failure", {31}}}, {}}}});
}

// XrayGLM-83: NCCL cannot create its /dev/shm segment (6, 35) under DistBackendError (32): /dev/shm
// too small (host.shm_exhausted, as TAXONOMY.md names this message), the NCCL error its symptom.
TEST(CorpusCases, XrayGlm83SharedMemorySegment) {
  Check({"XrayGLM-83",
         {{"host.shm_exhausted", 1, {6, 35}, {{"nccl.failure", {32}}}, {{"segment", "/dev/shm/nccl-Wq8ZkP"}}}}});
}

// digital-cousins-32: two independent causes. nvcc 12.4 rejects compute_120 (39) while building
// GroundingDINO (pip's error at 14, 63); later xformers fails against a newer Triton API (106).
TEST(CorpusCases, DigitalCousins32TwoIndependentCauses) {
  Check({"digital-cousins-32",
         {{"cuda.toolkit_too_old_for_arch", 1, {39}, {{"jit.build_failed", {14}}}, {{"sm", "120"}, {"required", "12.8"}}},
          {"python.symbol_missing", 0, {106}, {}, {}}}});
  // Neither cause explains the other: both are reported as independent root causes.
  RunResult r = Analyze("tests/data/corpus/cases/digital-cousins-32.log", true);
  Json doc = ParseJson(r.out);
  for (const char* id : {"cuda.toolkit_too_old_for_arch", "python.symbol_missing"}) {
    const Json* inc = nullptr;
    const Json* c = FindRoot(doc, id, &inc);
    ASSERT_NE(c, nullptr);
    const Json* ind = c->get("independent");
    ASSERT_NE(ind, nullptr);
    EXPECT_TRUE(ind->b) << id;
  }
}

// alltalk_tts-4: DeepSpeed's JIT looks for nvcc under the conda env (49); after CUDA_HOME is
// fixed, mpi4py is missing (103).
TEST(CorpusCases, Alltalk4NoNvccThenMissingModule) {
  Check({"alltalk_tts-4",
         {{"jit.build_failed", 1, {49}, {}, {}},
          {"python.module_missing", 0, {103}, {}, {{"module", "mpi4py"}}}}});
}

// flash-attention-853: cxx11abiTRUE wheel on a pre-cxx11 torch: undefined c10::Error symbol (18).
TEST(CorpusCases, FlashAttention853AbiMismatch) {
  Check({"flash-attention-853",
         {{"native.undefined_symbol", 1, {18}, {},
           {{"symbol", "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"}}}}});
}

// vllm-43435: a CUDA 13 vLLM wheel with a cu129 torch: libcudart.so.13 not found (33).
TEST(CorpusCases, Vllm43435CudaRuntimeLibraryMissing) {
  Check({"vllm-43435", {{"native.lib_not_found", 1, {33}, {}, {{"name", "libcudart.so.13"}}}}});
}

// gpustack-4678: Error 803 from cudaGetDeviceCount (33, 35): forward-compat libcuda ahead of the
// host driver.
TEST(CorpusCases, Gpustack4678Error803) {
  Check({"gpustack-4678", {{"cuda.driver_too_old", 1, {35}, {}, {{"code", "803"}}}}});
}

// ChatGLM3-681: uncorrectable ECC error on restart (29).
TEST(CorpusCases, ChatGlm3681UncorrectableEcc) {
  Check({"ChatGLM3-681", {{"gpu.hardware_fault", 1, {29}, {}, {}}}});
}

// Benign logs: alarming lines in processes that go on working give no incident.
TEST(CorpusCases, BenignLogsGiveNoIncident) {
  for (const char* id : {"vllm-9421", "nccl-259", "spark-vllm-docker-15", "kohya_ss-2203",
                         "lora-scripts-51", "vllm-18634", "SkyRL-1571"})
    Check({id, {}});
}

}  // namespace
}  // namespace corpus_test
