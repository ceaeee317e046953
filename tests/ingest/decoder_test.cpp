// Decoder: one test per line format and per process-prefix style.
#include <gtest/gtest.h>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

using testing::DecodeOne;

TEST(Decoder, PlainLineWithoutEnvelopeIsItsOwnMessage) {
  auto d = DecodeOne("just some text: here");
  EXPECT_EQ(d.line.message, "just some text: here");
  EXPECT_FALSE(d.line.process);
  EXPECT_FALSE(d.line.level);
  EXPECT_FALSE(d.line.time);
  EXPECT_FALSE(d.line.json);
}

TEST(Decoder, Iso8601WithLevel) {
  auto d = DecodeOne("2026-11-02T09:14:03.123Z ERROR engine died");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03.123Z");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "engine died");
}

TEST(Decoder, Iso8601WithOffsetAndNoLevel) {
  auto d = DecodeOne("2025-11-26T03:20:47.0159823+02:00 Traceback (most recent call last):");
  EXPECT_EQ(d.line.time.value_or(""), "2025-11-26T03:20:47.0159823+02:00");
  EXPECT_FALSE(d.line.level);
  EXPECT_EQ(d.line.message, "Traceback (most recent call last):");
}

TEST(Decoder, BracketedDateTime) {
  auto d = DecodeOne("[2026-11-02 09:14:03] INFO:     127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_FALSE(d.line.process);
  EXPECT_EQ(d.line.message, "127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK");
}

// spdlog's pattern: a logger's name and a thread in brackets before the level; the names are
// passed over only on the way to a level, other bracketed words stay in the message.
TEST(Decoder, SpdlogNamesBeforeTheLevel) {
  auto d = DecodeOne("[2026-11-02 09:14:03.120] [ctranslate2] [thread 7] [warning] The compute type is int8");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03.120");
  EXPECT_EQ(d.line.level.value_or(""), "WARNING");
  EXPECT_EQ(d.line.message, "The compute type is int8");
  d = DecodeOne("[main] [error] Could not open model file");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "Could not open model file");
  d = DecodeOne("[main] [thread 7] loaded 3 layers");
  EXPECT_FALSE(d.line.level);
  EXPECT_EQ(d.line.message, "[main] [thread 7] loaded 3 layers");
}

TEST(Decoder, VllmLevelDateAndLocation) {
  auto d = DecodeOne("INFO 05-26 07:50:26 [core.py:396] Waiting for init message");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_EQ(d.line.time.value_or(""), "--05-26T07:50:26");
  EXPECT_EQ(d.line.message, "Waiting for init message");
}

TEST(Decoder, VllmKeepsTracebackIndentation) {
  auto d = DecodeOne("ERROR 05-26 07:50:26 [core.py:396]   File \"/x.py\", line 3, in f");
  EXPECT_EQ(d.line.message, "  File \"/x.py\", line 3, in f");
  EXPECT_EQ(d.meta.indent, 2u);
}

TEST(Decoder, SyslogCapturesHostAndTag) {
  auto d = DecodeOne("Nov  2 07:06:01 gpu-node-3 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(d.line.time.value_or(""), "--11-02T07:06:01");
  EXPECT_EQ(d.line.host.value_or(""), "gpu-node-3");
  EXPECT_EQ(d.line.process.value_or(""), "kernel");
  EXPECT_EQ(d.line.message, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
}

TEST(Decoder, SyslogWithDmesgStampInside) {
  auto d = DecodeOne("Jun  1 00:00:04 gpu-node-16 kernel: [522294.718492] docker0: port 39 entered disabled state");
  EXPECT_EQ(d.line.host.value_or(""), "gpu-node-16");
  EXPECT_EQ(d.line.message, "docker0: port 39 entered disabled state");
}

TEST(Decoder, DmesgMonotonicStamp) {
  auto d = DecodeOne("[12345.678901] NVRM: Xid (PCI:0000:db:00): 13, pid=17997");
  EXPECT_EQ(d.line.message, "NVRM: Xid (PCI:0000:db:00): 13, pid=17997");
  EXPECT_TRUE(d.meta.header);
  EXPECT_FALSE(d.line.time);  // seconds since boot: no wall-clock time to report
}

TEST(Decoder, DmesgHumanStamp) {
  auto d = DecodeOne("[Sun Nov  2 07:06:01 2026] Out of memory: Killed process 1234 (python3)");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T07:06:01");
  EXPECT_EQ(d.line.message, "Out of memory: Killed process 1234 (python3)");
}

TEST(Decoder, GlogKlogHeader) {
  auto d = DecodeOne("I0601 12:00:00.123456    1234 prober.go:108] \"Probe succeeded\"");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_EQ(d.line.time.value_or(""), "--06-01T12:00:00.123456");
  EXPECT_EQ(d.line.message, "\"Probe succeeded\"");
}

TEST(Decoder, GlogErrorLetter) {
  auto d = DecodeOne("E1102 07:06:01.000001  77 server.cc:12] bind failed");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "bind failed");
}

// PyTorch's own log lines write DEBUG as V (TORCH_LOGS artifacts such as graph breaks, with the
// user code's stack after them): a debug record, not a line without a level.
TEST(Decoder, TorchLogsVerboseLetterIsDebug) {
  auto d = DecodeOne("V1207 09:20:35.600000 835 torch/_dynamo/symbolic_convert.py:5127] [0/0] [__graph_breaks] User code traceback:");
  EXPECT_EQ(d.line.level.value_or(""), "DEBUG");
  EXPECT_EQ(d.line.time.value_or(""), "--12-07T09:20:35.600000");
  EXPECT_EQ(d.line.message, "[0/0] [__graph_breaks] User code traceback:");
}

TEST(Decoder, C10WarningWithThreeDigitDate) {
  auto d = DecodeOne("[W601 12:00:00.123 Utils.hpp:134] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated");
  EXPECT_EQ(d.line.level.value_or(""), "WARNING");
  EXPECT_EQ(d.line.time.value_or(""), "--06-01T12:00:00.123");
  EXPECT_EQ(d.line.message, "Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated");
}

TEST(Decoder, C10WithoutDate) {
  auto d = DecodeOne("[rank1]:[W CudaIPCTypes.cpp:16] Producer process has been terminated");
  EXPECT_EQ(d.line.process.value_or(""), "rank1");
  EXPECT_EQ(d.line.level.value_or(""), "WARNING");
  EXPECT_EQ(d.line.message, "Producer process has been terminated");
}

TEST(Decoder, Logfmt) {
  auto d = DecodeOne("time=2026-11-02T09:14:03Z level=error msg=\"engine \\\"core\\\" died\" pid=7");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03Z");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "engine \"core\" died");
}

TEST(Decoder, LogfmtBareMessage) {
  auto d = DecodeOne("level=warn ts=2026-11-02T09:14:03Z msg=retrying");
  EXPECT_EQ(d.line.level.value_or(""), "WARNING");
  EXPECT_EQ(d.line.message, "retrying");
}

TEST(Decoder, Loguru) {
  auto d = DecodeOne("2026-11-02 09:14:03.123 | ERROR    | server.worker:run:12 - worker crashed");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03.123");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "worker crashed");
}

TEST(Decoder, TrantorCompactDateZoneThreadAndLevel) {
  // drogon/trantor (cortex.cpp under Jan): "YYYYMMDD HH:MM:SS.ffffff UTC <thread> LEVEL msg - file:line"
  auto d = DecodeOne("20241128 03:48:41.743000 UTC 21264 ERROR Could not load engine - server.cc:299");
  EXPECT_EQ(d.line.time.value_or(""), "2024-11-28T03:48:41.743000Z");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "Could not load engine - server.cc:299");
}

TEST(Decoder, CbangClockAndLevelLetter) {
  // Folding@home's client: "HH:MM:SS:<level><thread>:message"
  auto d = DecodeOne("14:21:54:W  :CUDA not supported: failed to open dynamic library 'libcuda.so'");
  EXPECT_EQ(d.line.level.value_or(""), "WARNING");
  EXPECT_EQ(d.line.message, "CUDA not supported: failed to open dynamic library 'libcuda.so'");
  EXPECT_EQ(DecodeOne("14:21:55:I1:Connecting to assign1.foldingathome.org").line.level.value_or(""), "INFO");
  EXPECT_FALSE(DecodeOne("14:21:55 the clock alone").line.level);
}

TEST(Decoder, EightDigitsThatAreNoDateStayText) {
  // A number of eight digits with no clock after it is no date.
  auto d = DecodeOne("20241128 requests served");
  EXPECT_FALSE(d.line.time);
  EXPECT_EQ(d.line.message, "20241128 requests served");
}

TEST(Decoder, PythonLoggingDefaultFormat) {
  auto d = DecodeOne("2025-06-01 00:00:02,418 - train - INFO - step 51944/250000 | loss 4.3458");
  EXPECT_EQ(d.line.time.value_or(""), "2025-06-01T00:00:02.418");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_EQ(d.line.message, "step 51944/250000 | loss 4.3458");
}

TEST(Decoder, PythonLoggingBasicConfigFormat) {
  auto d = DecodeOne("ERROR:root:could not load model");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "could not load model");
}

TEST(Decoder, ZapTabSeparatedLowercaseLevel) {
  auto d = DecodeOne("2025-06-01T00:00:03.519Z\tinfo\trouter/proxy.go:142\thealth check ok");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_EQ(d.line.message, "router/proxy.go:142\thealth check ok");
}

// NCCL logs its errors at WARN (it has no ERROR level), so its WARN is read as an error, at the
// start of a line as after the host:pid:tid prefix.
TEST(Decoder, NcclLineCarriesLevel) {
  auto d = DecodeOne("gpu-node-16:5294:5410 [2] NCCL WARN Missing \"iommu=pt\"");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(DecodeOne("NCCL WARN NET/IB : Got async event : port error").line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "gpu-node-16:5294:5410 [2] NCCL WARN Missing \"iommu=pt\"");
  EXPECT_EQ(DecodeOne("gpu-node-16:5294:5410 [2] NCCL INFO Bootstrap : Using eth0").line.level.value_or(""), "INFO");
}

// ---- process prefixes ----

TEST(DecoderPrefix, TorchRank) {
  auto d = DecodeOne("[rank0]: Traceback (most recent call last):");
  EXPECT_EQ(d.line.process.value_or(""), "rank0");
  EXPECT_EQ(d.line.message, "Traceback (most recent call last):");
}

TEST(DecoderPrefix, TorchRankKeepsFrameIndentation) {
  auto d = DecodeOne("[rank3]:   File \"/workspace/train.py\", line 412, in <module>");
  EXPECT_EQ(d.line.process.value_or(""), "rank3");
  EXPECT_EQ(d.line.message, "  File \"/workspace/train.py\", line 412, in <module>");
}

TEST(DecoderPrefix, TorchrunTeeRoleAndLocalRankKeepsTheLineAsWritten) {
  auto d = DecodeOne("[default3]:  File \"/workspace/train.py\", line 412, in <module>");
  EXPECT_EQ(d.line.process.value_or(""), "default3");
  EXPECT_EQ(d.line.message, "  File \"/workspace/train.py\", line 412, in <module>");
  // A bracketed word with a number but no colon right after is no such prefix.
  EXPECT_FALSE(DecodeOne("[step12] loss=0.3").line.process.has_value());
}

TEST(DecoderPrefix, VllmEngineCore) {
  auto d = DecodeOne("(EngineCore pid=123) ERROR 05-26 07:50:26 [core.py:396] EngineCore failed to start.");
  EXPECT_EQ(d.line.process.value_or(""), "EngineCore pid=123");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "EngineCore failed to start.");
}

TEST(DecoderPrefix, VllmNumberedEngineCore) {
  auto d = DecodeOne("(EngineCore_0 pid=25604) INFO 06-01 00:00:01 [block_pool.py:330] reset");
  EXPECT_EQ(d.line.process.value_or(""), "EngineCore_0 pid=25604");
  EXPECT_EQ(d.line.message, "reset");
}

TEST(DecoderPrefix, StageEngineCoreProc) {
  auto d = DecodeOne("(StageEngineCoreProc pid=8146) RuntimeError: boom");
  EXPECT_EQ(d.line.process.value_or(""), "StageEngineCoreProc pid=8146");
  EXPECT_EQ(d.line.message, "RuntimeError: boom");
}

TEST(DecoderPrefix, VllmWorkerWithRank) {
  auto d = DecodeOne("(VllmWorker rank=1 pid=4242) INFO 05-26 07:50:26 [gpu_worker.py:10] ready");
  EXPECT_EQ(d.line.process.value_or(""), "VllmWorker rank=1 pid=4242");
  EXPECT_EQ(d.line.message, "ready");
}

TEST(DecoderPrefix, RayRaylet) {
  auto d = DecodeOne("(raylet) [2026-11-02 09:14:03,123 E 77 77] worker_pool.cc:500: Some workers died");
  EXPECT_EQ(d.line.process.value_or(""), "raylet");
}

// An exception's class in parentheses, as CatBoost's binaries print their errors, is the message's
// start, not a process.
TEST(DecoderPrefix, AnExceptionClassInParenthesesIsNoProcess) {
  auto d = DecodeOne("(TFileError) util/system/file.cpp:857: can't open \"/data/pool.cd\" with mode RdOnly");
  EXPECT_FALSE(d.line.process.has_value());
  EXPECT_EQ(d.line.message.substr(0, 13), "(TFileError) ");
}

TEST(DecoderPrefix, RayPidOnly) {
  auto d = DecodeOne("(pid=123) ValueError: bad input");
  EXPECT_EQ(d.line.process.value_or(""), "pid=123");
  EXPECT_EQ(d.line.message, "ValueError: bad input");
}

TEST(DecoderPrefix, RayProcessAfterTimestampAndLevel) {
  auto d = DecodeOne("2025-06-01 00:00:02,884\tINFO (RayWorkerWrapper pid=34917) worker.py:957 -- Task done");
  EXPECT_EQ(d.line.process.value_or(""), "RayWorkerWrapper pid=34917");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_EQ(d.line.message, "worker.py:957 -- Task done");
}

TEST(DecoderPrefix, SglangTensorParallelRank) {
  auto d = DecodeOne("[2026-11-02 09:14:11 TP3] Scheduler hit an exception: Traceback (most recent call last):");
  EXPECT_EQ(d.line.process.value_or(""), "TP3");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:11");
  EXPECT_EQ(d.line.message, "Scheduler hit an exception: Traceback (most recent call last):");
}

TEST(DecoderPrefix, SglangDataAndTensorParallelRank) {
  auto d = DecodeOne("[2025-06-01 00:00:04 DP1 TP3] Decode batch. #running-req: 237");
  EXPECT_EQ(d.line.process.value_or(""), "DP1 TP3");
}

TEST(DecoderPrefix, DockerCompose) {
  auto d = DecodeOne("sglang-server-1  | [2026-11-02 09:14:03] INFO: started");
  EXPECT_EQ(d.line.process.value_or(""), "sglang-server-1");
  EXPECT_EQ(d.line.container.value_or(""), "sglang-server-1");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03");
  EXPECT_EQ(d.line.message, "started");
}

TEST(DecoderPrefix, StderrMarker) {
  auto d = DecodeOne("stderr: RuntimeError: CUDA error: out of memory");
  EXPECT_EQ(d.line.message, "RuntimeError: CUDA error: out of memory");
}

TEST(DecoderPrefix, JournaldHostUnitPid) {
  auto d = DecodeOne("gpu-host sglang[8146]: Traceback (most recent call last):");
  EXPECT_EQ(d.line.host.value_or(""), "gpu-host");
  EXPECT_EQ(d.line.process.value_or(""), "sglang[8146]");
  EXPECT_EQ(d.line.message, "Traceback (most recent call last):");
}

TEST(DecoderPrefix, SyslogUnitWithPid) {
  auto d = DecodeOne("Jun  1 00:00:01 gpu-node-16 kubelet[2126]: I0601 00:00:01.176576    2126 prober.go:108] ok");
  EXPECT_EQ(d.line.process.value_or(""), "kubelet[2126]");
  EXPECT_EQ(d.line.message, "ok");
}

// ---- ANSI, UTF-8, JSON ----

TEST(Decoder, AnsiColourRemovedFromMessageAndDisplay) {
  auto d = DecodeOne("\x1b[32mINFO\x1b[0m 05-26 07:50:26 [core.py:1] \x1b[1;31mred\x1b[0m text");
  EXPECT_EQ(d.line.level.value_or(""), "INFO");
  EXPECT_EQ(d.line.message, "red text");
  EXPECT_EQ(d.line.display.find('\x1b'), std::string::npos);
}

TEST(Decoder, SyslogEscapedAnsiRemoved) {
  auto d = DecodeOne("Nov  2 07:06:01 host app: #033[31mERROR#033[0m failed");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "failed");
  EXPECT_EQ(d.line.display, "Nov  2 07:06:01 host app: ERROR failed");
}

TEST(Decoder, InvalidUtf8KeptInMessageReplacedInDisplay) {
  auto d = DecodeOne("bad \xff\xfe bytes");
  EXPECT_EQ(d.line.message, "bad \xff\xfe bytes");
  EXPECT_EQ(d.line.display, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
  EXPECT_FALSE(d.meta.valid_utf8);
}

TEST(DecoderJson, DockerJsonFile) {
  auto d = DecodeOne(R"({"log":"[rank0]: RuntimeError: boom\n","stream":"stderr","time":"2025-06-01T00:00:01.000901680Z"})");
  EXPECT_TRUE(d.line.json);
  EXPECT_EQ(d.line.process.value_or(""), "rank0");
  EXPECT_EQ(d.line.message, "RuntimeError: boom");
  EXPECT_EQ(d.line.time.value_or(""), "2025-06-01T00:00:01.000901680Z");
}

TEST(DecoderJson, MsgKeyWithLevelAndTime) {
  auto d = DecodeOne(R"({"time":"2026-11-02T09:14:03Z","level":"warn","msg":"slow \"request\""})");
  EXPECT_TRUE(d.line.json);
  EXPECT_EQ(d.line.message, "slow \"request\"");
  EXPECT_EQ(d.line.level.value_or(""), "WARNING");
  EXPECT_EQ(d.line.time.value_or(""), "2026-11-02T09:14:03Z");
}

TEST(DecoderJson, MessageKey) {
  auto d = DecodeOne(R"({"message":"hello","levelname":"ERROR"})");
  EXPECT_EQ(d.line.message, "hello");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
}

TEST(DecoderJson, TextKey) {
  auto d = DecodeOne(R"({"n":1,"text":"plain words"})");
  EXPECT_EQ(d.line.message, "plain words");
}

TEST(DecoderJson, MsgPreferredOverLog) {
  auto d = DecodeOne(R"({"log":"the log","msg":"the msg"})");
  EXPECT_EQ(d.line.message, "the msg");
}

TEST(DecoderJson, EscapedAnsiInsideJsonRemoved) {
  auto d = DecodeOne(R"({"log":"\u001b[31mERROR\u001b[0m boom\n"})");
  EXPECT_EQ(d.line.message, "boom");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
}

TEST(DecoderJson, MalformedJsonIsPlainText) {
  auto d = DecodeOne(R"({"log": "unterminated})");
  EXPECT_FALSE(d.line.json);
  EXPECT_EQ(d.line.message, R"({"log": "unterminated})");
}

TEST(DecoderJson, ObjectWithoutMessageKeyKeepsWholeText) {
  auto d = DecodeOne(R"({"a":1})");
  EXPECT_TRUE(d.line.json);
  EXPECT_EQ(d.line.message, R"({"a":1})");
}

}  // namespace
}  // namespace triage::ingest
