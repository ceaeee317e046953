// Applicability (detail/site.h): what a log says of the machine it ran on, and the runner's
// verdict when this host is not that machine. The runner is given this machine's identity
// (VerifyConfig::identity) so that every case runs the same on any host.
#include <gtest/gtest.h>

#include <fstream>

#include "helpers.h"
#include "triage/verifiers/detail/site.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

using detail::ScanLine;

LogSite Scan(std::initializer_list<const char*> lines) {
  LogSite site;
  for (const char* l : lines) ScanLine(l, site);
  return site;
}

TEST(SiteScan, HostNamesFromPromptsSyslogNcclAndLaunchers) {
  LogSite s = Scan({"ops@ct200:~$ ./serve-kimi.sh", "[serve-kimi] host ct200, 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition",
                    "(venv) dev@ws5090:~/src$ python3 -m sglang.launch_server",
                    "Nov  2 07:06:01 gpu-node-7 kernel: [ 12.3] NVRM: Xid (PCI:0000:17:00): 79",
                    "node-12:4711:4790 [3] NCCL INFO Channel 00/02", "hostname: trainer-a", "[root@box1 work]# ls"});
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"ct200", "ws5090", "gpu-node-7", "node-12", "trainer-a", "box1"}));
}

// Words that only look like host names: a server's bind address, "host memory", an HTTP header,
// a command-line flag, a level after an ISO time.
TEST(SiteScan, NoHostFromBindAddressesProseOrFlags) {
  LogSite s = Scan({"server_args=ServerArgs(host='0.0.0.0', port=30000)", "--host 0.0.0.0 --port 8000",
                    "RuntimeError: host memory exhausted", "Host: huggingface.co", "the host compiler is gcc-14",
                    "2026-11-02T09:14:51Z INFO server: started", "copying from host to device",
                    "contact admin@example.com: see $HOME", "2025-11-26T03:20:47.0160016Z Attempted locations:",
                    "2025-10-09T07:41:09.8834415Z Auto-configed device: cpu"});
  EXPECT_TRUE(s.hosts.empty()) << s.hosts.front();
}

// The paths a log names for the disk check: the file being written, cache and checkpoint
// folders; not a traceback's source file, a package folder, a URL or /proc, /sys, /dev.
TEST(SiteScan, NamedPathsAreTheFilesAndFoldersWrittenTo) {
  LogSite s = Scan({"2026-11-02 09:00:00 INFO saving checkpoint (4198400 bytes) to /mnt/scratch/ckpt/step_100.pt",
                    "  File \"/app/train.py\", line 12, in <module>",
                    "HF_HOME=/data/hf-cache TRITON_CACHE_DIR='/var/cache/triton'",
                    "OSError: [Errno 28] No space left on device: '/mnt/scratch/ckpt/step_100.pt'",
                    "  /usr/lib/python3/dist-packages/torch/serialization.py:440: UserWarning",
                    "see https://pytorch.org/docs/stable/notes/cuda.html for more",
                    "cat /proc/meminfo; ls /dev/shm; output_dir=/out/run-7."});
  EXPECT_EQ(s.named_paths, (std::vector<std::string>{"/mnt/scratch/ckpt/step_100.pt", "/data/hf-cache",
                                                     "/var/cache/triton", "/out/run-7"}));
}

TEST(SiteScan, GpuModelsAndTheDevicesArchitecture) {
  LogSite s = Scan({"[serve-kimi] host ct200, 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.82.07",
                    "0, NVIDIA RTX PRO 6000 Blackwell Server Edition, 12.0, 580.82.07",
                    "Failed to get device capability: SM 12.x requires CUDA >= 12.9.",
                    "NVIDIA driver on your system is too old", "NVIDIA Corporation", "NVIDIA-SMI 580.82.07"});
  ASSERT_EQ(s.gpu_models.size(), 1u);
  EXPECT_EQ(s.gpu_models[0], "NVIDIA RTX PRO 6000 Blackwell Server Edition");
  ASSERT_EQ(s.archs.size(), 1u);
  EXPECT_TRUE(s.archs[0].family);
  EXPECT_EQ(detail::ArchName(s.archs[0]), "SM 12.x");

  LogSite t = Scan({"NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
                    "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |",
                    R"({"log":"#  Rank  0 Group  0 Pid  27114 on  trn-a04 device  0 [0x53] NVIDIA A100-SXM4-80GB\n","stream":"stderr"})"});
  EXPECT_EQ(t.gpu_models,
            (std::vector<std::string>{"NVIDIA GeForce RTX 5090", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"}));
  ASSERT_EQ(t.archs.size(), 1u);
  EXPECT_EQ(t.archs[0].arch, 120);
}

// A minimum is not the device: "requires sm75", "at least 8.0", "Minimum capability: 80"; the
// device's own comes after "your GPU has" or "Current".
TEST(SiteScan, MinimumsAreNotTheDevice) {
  LogSite s = Scan({"RuntimeError: FlashInfer requires GPUs with sm75 or higher",
                    "FlashAttention is only supported on GPUs with compute capability of at least 8.0",
                    "The quantization method fp8 is not supported for the current GPU. Minimum capability: 80.",
                    "nvcc fatal   : Unsupported gpu architecture 'compute_120'"});
  EXPECT_TRUE(s.archs.empty()) << detail::ArchName(s.archs.front());
  LogSite d = Scan({"requires device with capability >= (7, 0) but your GPU has capability (6, 1) (too old)",
                    "Minimum capability: 80. Current capability: 75."});
  ASSERT_EQ(d.archs.size(), 2u);
  EXPECT_EQ(d.archs[0].arch, 61);
  EXPECT_EQ(d.archs[1].arch, 75);
}

TEST(SiteScan, ToolkitsFromCudaHomeNvccAndItsVersion) {
  LogSite s = Scan({"[serve-kimi] CUDA_HOME=/usr/local/cuda-12.8 (nvcc: Cuda compilation tools, release 12.8, V12.8.93)",
                    "/usr/local/cuda-12.8/bin/nvcc", "No CUDA runtime is found, using CUDA_HOME='/opt/cuda'"});
  EXPECT_EQ(s.toolkit_roots, (std::vector<std::string>{"/usr/local/cuda-12.8", "/opt/cuda"}));
  EXPECT_EQ(s.toolkit_versions, (std::vector<int>{12080}));
}

TEST(SiteScan, LogTimes) {
  EXPECT_EQ(detail::ParseLogTime("2026-11-02T09:14:51"), int64_t(1793610891));
  EXPECT_EQ(detail::ParseLogTime("2026-11-02T10:14:51+01:00"), int64_t(1793610891));
  EXPECT_FALSE(detail::ParseLogTime("09:14:51").has_value());
}

// The defining case: read from the example's own file, the incident names ct200 (its prompt and
// launcher lines), SM 12.x GPUs (RTX PRO 6000) and CUDA 12.8 at /usr/local/cuda-12.8.
TEST(SiteRead, TheDefiningCaseNamesItsHostGpusAndToolkit) {
  core::Incident inc;
  inc.host = "vm";  // what the analyzer gives a log that names no host field on machine "vm"
  inc.source = std::string(TRIAGE_SOURCE_DIR) + "/examples/sglang-blackwell/sglang-server.log";
  inc.first_line = 2;
  inc.last_line = 352;
  inc.ended = "2026-11-02T09:24:02";
  core::Cause c;
  c.cause = "cuda.toolkit_too_old_for_arch";
  c.captures = {{"family", "12.x"}, {"required", "12.9"}, {"sm", "12.x"}};
  c.evidence = {{inc.source, 197, "[2026-11-02 09:14:51 TP0] Failed to get device capability: SM 12.x requires CUDA >= 12.9."}};
  inc.causes = {c};
  uint64_t budget = 1 << 20;
  LogSite site = detail::ReadLogSite(inc, "vm", budget);
  EXPECT_TRUE(site.lines_read);
  EXPECT_EQ(site.hosts, (std::vector<std::string>{"ct200"}));
  EXPECT_EQ(site.gpu_models, (std::vector<std::string>{"NVIDIA RTX PRO 6000 Blackwell Server Edition"}));
  ASSERT_FALSE(site.archs.empty());
  EXPECT_EQ(detail::ArchName(site.archs[0]), "SM 12.x");
  EXPECT_EQ(site.toolkit_roots, (std::vector<std::string>{"/usr/local/cuda-12.8"}));
  EXPECT_EQ(site.toolkit_versions, (std::vector<int>{12080}));
  EXPECT_TRUE(site.time.has_value());
  EXPECT_FALSE(site.names_this_host);

  // The same incident against a file whose lines are not the evidence: captures only.
  testing::TempDir dir;
  inc.source = dir.Write("sglang-server.log", "ops@elsewhere:~$ true\n");
  c.evidence[0].source = inc.source;
  inc.causes = {c};
  LogSite other = detail::ReadLogSite(inc, "vm", budget);
  EXPECT_FALSE(other.lines_read);
  EXPECT_TRUE(other.hosts.empty());

  // Out of budget: the source is not read again.
  inc.source = std::string(TRIAGE_SOURCE_DIR) + "/examples/sglang-blackwell/sglang-server.log";
  c.evidence[0].source = inc.source;
  inc.causes = {c};
  uint64_t spent = 1000;
  LogSite poor = detail::ReadLogSite(inc, "vm", spent);
  EXPECT_FALSE(poor.lines_read);
  EXPECT_TRUE(poor.hosts.empty());
  EXPECT_EQ(spent, 0u);
}

HostIdentity NoGpuHost(const std::string& name) {
  HostIdentity h;
  h.name = name;
  h.gpus_known = true;
  h.gpu_note = "no driver: libcuda.so.1 not found";
  return h;
}

HostIdentity GpuHost(const std::string& name, const std::string& gpu, int arch, int count = 1) {
  HostIdentity h;
  h.name = name;
  h.gpus_known = true;
  for (int i = 0; i < count; ++i) h.gpus.push_back({gpu, arch});
  return h;
}

LogSite DefiningSite() {
  LogSite s;
  s.hosts = {"ct200"};
  s.gpu_models = {"NVIDIA RTX PRO 6000 Blackwell Server Edition"};
  s.archs = {{120, true, "SM 12.x"}};
  return s;
}

TEST(SiteJudge, AnotherHostWithoutAGpuNamesBothSides) {
  detail::SiteJudgement j = detail::JudgeSite(DefiningSite(), NoGpuHost("vm"));
  EXPECT_TRUE(j.other_host);
  EXPECT_TRUE(j.gpus_differ);
  EXPECT_EQ(j.log_host, "ct200");
  EXPECT_EQ(j.reason,
            "the log is from ct200 with SM 12.x GPUs (NVIDIA RTX PRO 6000 Blackwell Server Edition); "
            "this host is vm with no GPU");
  EXPECT_NE(j.facts_json.find("\"other_host\":true"), std::string::npos) << j.facts_json;
}

TEST(SiteJudge, TheLogsOwnHostIsApplicable) {
  detail::SiteJudgement j =
      detail::JudgeSite(DefiningSite(), GpuHost("ct200", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120, 8));
  EXPECT_FALSE(j.other_host) << j.reason;
  EXPECT_NE(j.reason.find("the log names this host (ct200)"), std::string::npos) << j.reason;
}

// No host name in the log: the analyzer's default is this machine's name, which proves nothing;
// the GPUs decide.
TEST(SiteJudge, WithoutAHostNameTheGpusDecide) {
  LogSite s = DefiningSite();
  s.hosts.clear();
  EXPECT_TRUE(detail::JudgeSite(s, GpuHost("vm", "NVIDIA H200", 90)).other_host);
  // Another model of the same architecture is another machine.
  EXPECT_TRUE(detail::JudgeSite(s, GpuHost("ws", "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 120)).other_host);
  detail::SiteJudgement same = detail::JudgeSite(s, GpuHost("box", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120));
  EXPECT_FALSE(same.other_host) << same.reason;
  LogSite nothing;
  detail::SiteJudgement unknown = detail::JudgeSite(nothing, NoGpuHost("vm"));
  EXPECT_FALSE(unknown.other_host);
  EXPECT_EQ(unknown.reason, "the log names no host or GPU to tell it from this host (vm)");
  // GPUs this host cannot list (a driver that is not there beside a device node) decide nothing.
  HostIdentity unsure;
  unsure.name = "vm";
  unsure.gpu_note = "no driver: libcuda.so.1 not found; an NVIDIA device node exists in /dev";
  EXPECT_FALSE(detail::JudgeSite(s, unsure).other_host);
}

// --- the runner: applicability before any check ---

class Records final : public Verifier {
 public:
  std::string_view name() const override { return "test.records"; }
  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    return Finding::Confirmed("ran for " + h.cause + " pid=" + h.Capture("pid"), "{}");
  }
};

core::Incident DefiningIncident() {
  core::Incident inc;
  inc.host = "ct200";  // as if a syslog prefix had named it
  core::Cause c;
  c.cause = "cuda.toolkit_too_old_for_arch";
  c.captures = {{"family", "12.x"}, {"sm", "12.x"}, {"required", "12.9"}, {"pid", "883"}};
  c.evidence = {{"-", 197, "Failed to get device capability: SM 12.x requires CUDA >= 12.9."}};
  c.verify = {{"test.records", {}}, {"no.such.verifier", {}}};
  inc.causes = {c};
  return inc;
}

std::shared_ptr<const Registry> RecordsRegistry() {
  auto r = std::make_shared<Registry>();
  r->Add(std::make_unique<Records>());
  return r;
}

TEST(SiteRunner, ALogOfAnotherHostIsNotApplicableAndNothingRuns) {
  VerifyConfig config;
  config.identity = NoGpuHost("vm");
  auto runner = MakeVerificationRunner(config, RecordsRegistry());
  core::Incident inc = DefiningIncident();
  runner->VerifyIncident(inc);
  ASSERT_EQ(inc.causes[0].verifications.size(), 2u);
  for (const auto& v : inc.causes[0].verifications) {
    EXPECT_EQ(v.verdict, core::Verdict::kNotApplicable) << v.verifier;
    EXPECT_EQ(v.reason, "the log is from ct200 with SM 12.x GPUs; this host is vm with no GPU");
    EXPECT_EQ(v.host, "vm");
    EXPECT_NE(v.facts_json.find("\"here\":{\"host\":\"vm\""), std::string::npos) << v.facts_json;
  }
  ASSERT_TRUE(inc.verified_on.has_value());
  EXPECT_TRUE(inc.verified_on->other_host);
  EXPECT_EQ(inc.verified_on->host, "vm");
  EXPECT_EQ(inc.verified_on->log_host, "ct200");
  // The score does not move.
  inc.causes[0].score = 0.88;
  core::ApplyVerdicts(inc);
  EXPECT_DOUBLE_EQ(inc.causes[0].score, 0.88);
}

TEST(SiteRunner, OnTheLogsHostTheCheckRunsWithTheCausesCaptures) {
  VerifyConfig config;
  config.identity = GpuHost("ct200", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120, 8);
  auto runner = MakeVerificationRunner(config, RecordsRegistry());
  core::Incident inc = DefiningIncident();
  runner->VerifyIncident(inc);
  ASSERT_EQ(inc.causes[0].verifications.size(), 2u);
  EXPECT_EQ(inc.causes[0].verifications[0].verdict, core::Verdict::kConfirmed);
  EXPECT_EQ(inc.causes[0].verifications[0].reason, "ran for cuda.toolkit_too_old_for_arch pid=883");
  EXPECT_EQ(inc.causes[0].verifications[1].reason, "unknown verifier no.such.verifier");
  ASSERT_TRUE(inc.verified_on.has_value());
  EXPECT_FALSE(inc.verified_on->other_host);
}

// A filled template marks a missing capture "<port>": never an argument, never in a reason.
TEST(SiteRunner, AMissingCapturesMarkIsNoArgument) {
  VerifyConfig config;
  config.identity = NoGpuHost("vm");
  auto runner = MakeVerificationRunner(config);
  core::Incident inc;
  core::Cause c;
  c.cause = "net.port_in_use";
  c.verify = {{"net.port", {{"port", "<port>"}}}};
  inc.causes = {c};
  runner->VerifyIncident(inc);
  ASSERT_EQ(inc.causes[0].verifications.size(), 1u);
  EXPECT_EQ(inc.causes[0].verifications[0].verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(inc.causes[0].verifications[0].reason, "the log names no port");
}

}  // namespace
}  // namespace triage::verifiers
