// Assembler: one test per traceback shape and block kind.
#include <gtest/gtest.h>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

using testing::Assemble;
using testing::Tracebacks;

const char* kPlain =
    "starting\n"
    "Traceback (most recent call last):\n"
    "  File \"/app/main.py\", line 10, in <module>\n"
    "    main()\n"
    "  File \"/app/main.py\", line 6, in main\n"
    "    import flashinfer\n"
    "ImportError: cannot import name 'current_compilation_context' from 'flashinfer.jit.env'\n"
    "2026-11-02 09:14:03 INFO after\n";

TEST(Assembler, PlainTracebackIsOneEventWithFramesAndException) {
  auto ev = Assemble(kPlain);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kind, EventKind::kLine);
  const Event& tb = ev[1];
  EXPECT_EQ(tb.kind, EventKind::kTraceback);
  EXPECT_EQ(tb.first_line, 2u);
  EXPECT_EQ(tb.last_line, 7u);
  ASSERT_EQ(tb.frames.size(), 2u);
  EXPECT_EQ(tb.frames[0].file, "/app/main.py");
  EXPECT_EQ(tb.frames[0].line, 10u);
  EXPECT_EQ(tb.frames[0].function, "<module>");
  EXPECT_EQ(tb.frames[0].code, "main()");
  EXPECT_EQ(tb.frames[1].code, "import flashinfer");
  ASSERT_EQ(tb.exceptions.size(), 1u);
  EXPECT_EQ(tb.exceptions[0].type, "ImportError");
  EXPECT_EQ(tb.exceptions[0].message,
            "cannot import name 'current_compilation_context' from 'flashinfer.jit.env'");
  EXPECT_FALSE(tb.truncated);
  EXPECT_EQ(tb.lines.size(), 6u);
  EXPECT_EQ(tb.text.substr(0, 35), "Traceback (most recent call last):\n");
  EXPECT_EQ(ev[2].Text(), "after");
}

// A paste that lost the traceback's indentation: each frame's source line is still its code, and
// the exception is the typed line after them, not the first unindented line.
TEST(Assembler, ATracebackPastedWithoutIndentationKeepsItsSourceLinesAndException) {
  auto ev = Assemble(
      "Traceback (most recent call last):\n"
      "File \"/app/main.py\", line 10, in <module>\n"
      "main()\n"
      "File \"/usr/lib/python3/site-packages/deepspeed/x.py\", line 5, in f\n"
      "x = y.z\n"
      "AttributeError: module 'torch' has no attribute 'float8_e8m0fnu'\n");
  ASSERT_EQ(ev.size(), 1u);
  const Event& tb = ev[0];
  ASSERT_EQ(tb.frames.size(), 2u);
  EXPECT_EQ(tb.frames[0].code, "main()");
  EXPECT_EQ(tb.frames[1].code, "x = y.z");
  ASSERT_EQ(tb.exceptions.size(), 1u);
  EXPECT_EQ(tb.exceptions[0].type, "AttributeError");
  EXPECT_EQ(tb.exceptions[0].message, "module 'torch' has no attribute 'float8_e8m0fnu'");
}

TEST(Assembler, HeaderlessLineAfterExceptionContinuesItsMessage) {
  // Python prints a multi-line message as bare lines; without an envelope to tell them apart,
  // a bare line right after the exception line is read as part of its message.
  auto ev = Assemble("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 1\nmore\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exceptions.back().message, "1\nmore");
}

TEST(Assembler, ChunkingDoesNotChangeEvents) {
  auto whole = Assemble(kPlain);
  auto bytes = Assemble(kPlain, {}, 1);
  ASSERT_EQ(whole.size(), bytes.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(EventToJson(whole[i], "x"), EventToJson(bytes[i], "x"));
  }
}

TEST(Assembler, DuringHandlingChainOutermostFirst) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"a.py\", line 1, in <module>\n"
      "    d['k']\n"
      "KeyError: 'k'\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"a.py\", line 3, in <module>\n"
      "    raise RuntimeError('wrapped')\n"
      "RuntimeError: wrapped\n"));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].exceptions.size(), 2u);
  EXPECT_EQ(ev[0].exceptions[0].type, "KeyError");
  EXPECT_EQ(ev[0].exceptions[1].type, "RuntimeError");
  EXPECT_EQ(ev[0].exceptions[1].message, "wrapped");
  ASSERT_EQ(ev[0].frames.size(), 1u);  // the frames of the last traceback
  EXPECT_EQ(ev[0].frames[0].line, 3u);
  EXPECT_EQ(ev[0].last_line, 11u);
}

TEST(Assembler, DirectCauseChainFromRaiseFrom) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"b.py\", line 2, in load\n"
      "    open(p)\n"
      "FileNotFoundError: [Errno 2] No such file or directory: 'w.bin'\n"
      "\n"
      "The above exception was the direct cause of the following exception:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"b.py\", line 9, in <module>\n"
      "    load()\n"
      "ValueError: weights missing\n"));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].exceptions.size(), 2u);
  EXPECT_EQ(ev[0].exceptions[0].type, "FileNotFoundError");
  EXPECT_EQ(ev[0].exceptions[1].type, "ValueError");
}

TEST(Assembler, EveryLineWithRankPrefix) {
  auto ev = Tracebacks(Assemble(
      "[rank4]: Traceback (most recent call last):\n"
      "[rank4]:   File \"/workspace/train.py\", line 412, in <module>\n"
      "[rank4]:     main()\n"
      "[rank4]: ModuleNotFoundError: No module named 'sgl_kernel'\n"
      "[rank4]:2025-06-01 00:00:09,430 - train - INFO - step 1\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].process.value_or(""), "rank4");
  EXPECT_EQ(ev[0].exceptions.back().type, "ModuleNotFoundError");
  EXPECT_EQ(ev[0].exceptions.back().message, "No module named 'sgl_kernel'");
  EXPECT_EQ(ev[0].last_line, 4u);
}

TEST(Assembler, EveryLineWithLoggerHeader) {
  auto ev = Tracebacks(Assemble(
      "(EngineCore pid=9) ERROR 05-26 07:50:26 [core.py:396] EngineCore failed to start.\n"
      "(EngineCore pid=9) ERROR 05-26 07:50:26 [core.py:396] Traceback (most recent call last):\n"
      "(EngineCore pid=9) ERROR 05-26 07:50:26 [core.py:396]   File \"/v/core.py\", line 387, in run\n"
      "(EngineCore pid=9) ERROR 05-26 07:50:26 [core.py:396]     engine = EngineCoreProc()\n"
      "(EngineCore pid=9) ERROR 05-26 07:50:26 [core.py:396] ValueError: No available memory for the cache blocks.\n"
      "(EngineCore pid=9) INFO 05-26 07:50:27 [core.py:12] shutting down\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].first_line, 2u);
  EXPECT_EQ(ev[0].last_line, 5u);
  EXPECT_EQ(ev[0].level.value_or(""), "ERROR");
  EXPECT_EQ(ev[0].frames.size(), 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "ValueError");
}

TEST(Assembler, BlankLinesInsideTraceback) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "\n"
      "  File \"a.py\", line 1, in <module>\n"
      "\n"
      "    f()\n"
      "OSError: disk\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].frames.size(), 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "OSError");
}

TEST(Assembler, Python311CaretLines) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"/s/scheduler.py\", line 3102, in run_scheduler_process\n"
      "    scheduler = Scheduler(\n"
      "                ^^^^^^^^^^\n"
      "  File \"/s/x.py\", line 9, in f\n"
      "    return a[i] + b\n"
      "           ~~~~^^^\n"
      "IndexError: list index out of range\n"));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].frames.size(), 2u);
  EXPECT_EQ(ev[0].frames[0].code, "scheduler = Scheduler(");
  EXPECT_EQ(ev[0].frames[1].code, "return a[i] + b");
  EXPECT_EQ(ev[0].exceptions.back().type, "IndexError");
}

TEST(Assembler, TwoProcessesInterleavedAreDemultiplexed) {
  auto ev = Tracebacks(Assemble(
      "[rank0]: Traceback (most recent call last):\n"
      "[rank1]: Traceback (most recent call last):\n"
      "[rank0]:   File \"t.py\", line 1, in <module>\n"
      "[rank1]:   File \"t.py\", line 2, in <module>\n"
      "[rank1]:     g()\n"
      "[rank0]:     f()\n"
      "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
      "[rank0]: RuntimeError: NCCL communicator was aborted\n"));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].process.value_or(""), "rank0");
  EXPECT_EQ(ev[0].first_line, 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "RuntimeError");
  EXPECT_EQ(ev[0].frames.at(0).line, 1u);
  EXPECT_EQ(ev[1].process.value_or(""), "rank1");
  EXPECT_EQ(ev[1].exceptions.back().type, "torch.OutOfMemoryError");
  EXPECT_EQ(ev[1].frames.at(0).line, 2u);
}

TEST(Assembler, OtherProcessesLinesInBetweenStayOutsideAndInOrder) {
  auto all = Assemble(
      "(EngineCore_0 pid=5) Traceback (most recent call last):\n"
      "[2025-06-01 00:00:06 TP2] Decode batch. #running-req: 214\n"
      "(EngineCore_0 pid=5)   File \"/v/core.py\", line 691, in run_engine_core\n"
      "gpu-node-16:1862:2076 [4] NCCL INFO Channel 28/0\n"
      "(EngineCore_0 pid=5)     engine_core = EngineCoreProc(*args, **kwargs)\n"
      "(EngineCore_0 pid=5) RuntimeError: FlashInfer requires GPUs with sm75 or higher\n"
      "tail\n");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].kind, EventKind::kTraceback);
  EXPECT_EQ(all[0].lines.size(), 4u);
  EXPECT_EQ(all[0].exceptions.back().message, "FlashInfer requires GPUs with sm75 or higher");
  EXPECT_EQ(all[1].first_line, 2u);
  EXPECT_EQ(all[2].first_line, 4u);
  EXPECT_EQ(all[3].first_line, 7u);
}

TEST(Assembler, CutOffByEndOfInputIsTruncated) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"a.py\", line 1, in <module>\n"
      "    f()"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].truncated);
  EXPECT_TRUE(ev[0].exceptions.empty());
  EXPECT_EQ(ev[0].frames.size(), 1u);
}

TEST(Assembler, CompleteTracebackAtEndOfInputIsNotTruncated) {
  auto ev = Tracebacks(Assemble("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 1"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_FALSE(ev[0].truncated);
}

TEST(Assembler, MultiLineExceptionMessage) {
  auto ev = Tracebacks(Assemble(
      "[rank1]: Traceback (most recent call last):\n"
      "[rank1]:   File \"d.py\", line 2806, in all_reduce\n"
      "[rank1]:     work = group.allreduce([tensor], opts)\n"
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, remote process exited\n"
      "[rank1]: ncclRemoteError: A call failed possibly due to a network error.\n"
      "[rank1]: Last error:\n"
      "[rank1]: NET/IB : Got completion from peer with status=12\n"
      "[rank1]:2025-06-01 00:00:11,449 - train - INFO - step 3\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exceptions.size(), 1u);
  EXPECT_EQ(ev[0].exceptions[0].type, "torch.distributed.DistBackendError");
  EXPECT_EQ(ev[0].exceptions[0].message,
            "NCCL error in: ProcessGroupNCCL.cpp:3356, remote process exited\n"
            "ncclRemoteError: A call failed possibly due to a network error.\n"
            "Last error:\n"
            "NET/IB : Got completion from peer with status=12");
  EXPECT_EQ(ev[0].last_line, 7u);
}

TEST(Assembler, EmptyFirstMessageLineThenBlock) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/bin/torchrun\", line 8, in <module>\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "============================================================\n"
      "/workspace/train.py FAILED\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exceptions[0].message,
            "============================================================\n/workspace/train.py FAILED");
}

TEST(Assembler, SyntaxErrorShape) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"/app/run.py\", line 3, in <module>\n"
      "    import cfg\n"
      "  File \"/app/cfg.py\", line 7\n"
      "    def f(:\n"
      "          ^\n"
      "SyntaxError: invalid syntax\n"));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].frames.size(), 2u);
  EXPECT_EQ(ev[0].frames[1].file, "/app/cfg.py");
  EXPECT_EQ(ev[0].frames[1].line, 7u);
  EXPECT_EQ(ev[0].frames[1].function, "");
  EXPECT_EQ(ev[0].frames[1].code, "def f(:");
  EXPECT_EQ(ev[0].exceptions.back().type, "SyntaxError");
  EXPECT_EQ(ev[0].exceptions.back().message, "invalid syntax");
}

TEST(Assembler, SyntaxErrorWithoutTracebackHead) {
  auto ev = Tracebacks(Assemble(
      "  File \"/tmp/x.py\", line 1\n"
      "    def f(:\n"
      "          ^\n"
      "SyntaxError: invalid syntax\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].first_line, 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "SyntaxError");
}

TEST(Assembler, LoggerLedTraceback) {
  auto ev = Tracebacks(Assemble(
      "2026-11-02 09:14:03,001 ERROR Traceback (most recent call last):\n"
      "  File \"/srv/app.py\", line 5, in handle\n"
      "    run()\n"
      "RuntimeError: worker died\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].level.value_or(""), "ERROR");
  EXPECT_EQ(ev[0].time.value_or(""), "2026-11-02T09:14:03.001");
  EXPECT_EQ(ev[0].exceptions.back().message, "worker died");
}

TEST(Assembler, TracebackStartingMidLine) {
  auto ev = Tracebacks(Assemble(
      "Initialization failed. router_init_state: Traceback (most recent call last):\n"
      "  File \"/s/manager_single.py\", line 76, in start_controller_process\n"
      "    model_client = ModelTpClient(\n"
      "                   ^^^^^^^^^^^^^^\n"
      "torch.OutOfMemoryError: CUDA out of memory.\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].first_line, 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "torch.OutOfMemoryError");
}

TEST(Assembler, PrefixedHeadContinuesWithUnprefixedLines) {
  auto ev = Tracebacks(Assemble(
      "[2026-05-03 16:21:17 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/s/cuda_graph_runner.py\", line 441, in __init__\n"
      "    self.capture()\n"
      "[2026-05-03 16:21:17 TP1] unrelated\n"
      "RuntimeError: CUDA error: out of memory\n"
      "\n"
      "[2026-05-03 16:21:18] Received sigquit from a child process. It usually means the child failed.\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].process.value_or(""), "TP0");
  EXPECT_EQ(ev[0].frames.size(), 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "RuntimeError");
  EXPECT_EQ(ev[0].exceptions.back().message, "CUDA error: out of memory");
}

TEST(Assembler, IPythonLayout) {
  auto ev = Tracebacks(Assemble(
      "---------------------------------------------------------------------------\n"
      "ValueError                                Traceback (most recent call last)\n"
      "Cell In[3], line 5\n"
      "      3 x = 1\n"
      "      4 y = 2\n"
      "----> 5 foo()\n"
      "\n"
      "File ~/proj/x.py:12, in foo()\n"
      "     10 def foo():\n"
      "---> 12     raise ValueError(\"bad\")\n"
      "\n"
      "ValueError: bad\n"));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].frames.size(), 2u);
  EXPECT_EQ(ev[0].frames[0].file, "Cell In[3]");
  EXPECT_EQ(ev[0].frames[0].line, 5u);
  EXPECT_EQ(ev[0].frames[0].code, "foo()");
  EXPECT_EQ(ev[0].frames[1].file, "~/proj/x.py");
  EXPECT_EQ(ev[0].frames[1].line, 12u);
  EXPECT_EQ(ev[0].frames[1].function, "foo()");
  EXPECT_EQ(ev[0].exceptions.back().type, "ValueError");
  EXPECT_EQ(ev[0].exceptions.back().message, "bad");
}

TEST(Assembler, OldIPythonLayout) {
  auto ev = Tracebacks(Assemble(
      "KeyError                                  Traceback (most recent call last)\n"
      "<ipython-input-3-0a1b2c> in <module>()\n"
      "----> 1 d['x']\n"
      "\n"
      "KeyError: 'x'\n"));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].frames.size(), 1u);
  EXPECT_EQ(ev[0].frames[0].file, "<ipython-input-3-0a1b2c>");
  EXPECT_EQ(ev[0].frames[0].line, 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "KeyError");
}

TEST(Assembler, CudaAdviceLinesStayWithTheException) {
  auto ev = Tracebacks(Assemble(
      "Traceback (most recent call last):\n"
      "  File \"m.py\", line 4, in forward\n"
      "    y = x @ w\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
      "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
      "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
      "\n"
      "next\n"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exceptions.back().type, "RuntimeError");
  const std::string& m = ev[0].exceptions.back().message;
  EXPECT_EQ(m.rfind("CUDA error: an illegal memory access was encountered\n", 0), 0u);
  EXPECT_NE(m.find("CUDA_LAUNCH_BLOCKING=1"), std::string::npos);
  EXPECT_NE(m.find("TORCH_USE_CUDA_DSA"), std::string::npos);
  EXPECT_EQ(ev[0].last_line, 7u);
}

TEST(Assembler, CudaErrorOutsideTracebackIsBlockWithAdvice) {
  auto ev = Assemble(
      "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "[rank0]: CUDA kernel errors might be asynchronously reported at some other API call.\n"
      "[rank0]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
      "[rank0]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
      "[rank0]: done\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, EventKind::kBlock);
  EXPECT_EQ(ev[0].lines.size(), 4u);
  EXPECT_EQ(ev[1].kind, EventKind::kLine);
}

// The framer's flag for a block phrase is about the raw line; it must hold for what the JSON
// decoder makes of it, escapes undone (a \uXXXX among them), and for text behind ANSI colour.
TEST(Assembler, BlockPhraseInsideJsonAndColour) {
  const std::string advice = "CUDA kernel errors might be asynchronously reported at some other API call.";
  for (const std::string& head : {std::string("{\"log\":\"CUDA error: bad\\n\",\"stream\":\"stderr\"}"),
                                  std::string("{\"log\":\"CUDA err\\u006fr: bad\\n\"}"),
                                  std::string("{\"log\":\"CUDA \\u00e9rror= x CUDA error\\u003a bad\"}"),
                                  std::string("CUDA erro\x1b[0mr: bad"),
                                  std::string("CUDA err#033[1mor= bad CUDA erro#033[0mr: x")}) {
    auto ev = Assemble(head + "\n{\"log\":\"" + advice + "\\n\"}\ndone\n");
    ASSERT_EQ(ev.size(), 2u) << head;
    EXPECT_EQ(ev[0].kind, EventKind::kBlock) << head;
    EXPECT_EQ(ev[0].lines.size(), 2u) << head;
  }
}

TEST(Assembler, TerminateCalledBlock) {
  auto ev = Assemble(
      "terminate called after throwing an instance of 'c10::Error'\n"
      "  what():  CUDA error: out of memory\n"
      "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):\n"
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f in libc10.so)\n"
      "frame #1: <unknown function> + 0x1 (0x7f in libc10_cuda.so)\n"
      "Aborted (core dumped)\n"
      "$ \n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, EventKind::kBlock);
  EXPECT_EQ(ev[0].last_line, 6u);
}

TEST(Assembler, NcclWatchdogBlockJoinsTerminate) {
  auto ev = Assemble(
      "[rank2]:[E601 00:00:05.091002701 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1) ran for 600000 milliseconds before timing out.\n"
      "[rank2]:[E601 00:00:05.091375796 ProcessGroupNCCL.cpp:1785] [Rank 2] failure detected by watchdog\n"
      "[rank2]: terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "[rank2]:   what():  [Rank 2] Process group watchdog thread terminated with exception: timeout\n"
      "[rank2]: frame #0: c10::Error::Error + 0x96\n"
      "[rank2]:\n"
      "[rank2]:2025-06-01 00:00:05,500 - train - INFO - step 1\n");
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, EventKind::kBlock);
  EXPECT_EQ(ev[0].first_line, 1u);
  EXPECT_EQ(ev[0].last_line, 5u);
  EXPECT_EQ(ev[0].level.value_or(""), "ERROR");
}

TEST(Assembler, FaulthandlerDumpIsBlockNotTraceback) {
  auto ev = Assemble(
      "Fatal Python error: Segmentation fault\n"
      "\n"
      "Thread 0x00007f (most recent call first):\n"
      "  File \"/usr/lib/python3/threading.py\", line 331 in wait\n"
      "\n"
      "Current thread 0x00007e (most recent call first):\n"
      "  File \"/x/fp8_utils.py\", line 900 in forward\n"
      "\n"
      "Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)\n"
      "Segmentation fault (core dumped)\n");
  EXPECT_TRUE(Tracebacks(ev).empty());
  ASSERT_GE(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kBlock);
  EXPECT_EQ(ev[0].last_line, 9u);
}

TEST(Assembler, AFaulthandlerDumpThatEndsTheInputSoFarIsHeldUntilFlushed) {
  // Nothing after the dump says it is over: it stays open, out of the sink, until a flush.
  std::vector<Event> out;
  EventStream stream(0, {}, [&out](Event&& ev) { out.push_back(std::move(ev)); });
  stream.Feed(
      "Fatal Python error: Segmentation fault\n"
      "\n"
      "Current thread 0x00007e (most recent call first):\n"
      "  File \"/app/crash.py\", line 12 in crash\n"
      "\n"
      "Extension modules: numpy.core._multiarray_umath (total: 1)\n");
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(stream.assembling());
  stream.Flush();
  EXPECT_FALSE(stream.assembling());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, EventKind::kBlock);
  EXPECT_EQ(out[0].last_line, 6u);
}

TEST(Assembler, OrdinaryLinesAreLineEvents) {
  auto ev = Assemble("a\nb\n\nc\n");
  ASSERT_EQ(ev.size(), 4u);
  for (const auto& e : ev) EXPECT_EQ(e.kind, EventKind::kLine);
  EXPECT_EQ(ev[2].Text(), "");
}

TEST(Assembler, BlankLinesAfterTracebackAreSeparateEventsInOrder) {
  auto ev = Assemble(
      "Traceback (most recent call last):\n"
      "  File \"a.py\", line 1, in <module>\n"
      "KeyError: 1\n"
      "\n"
      "(other pid=1) chatter\n"
      "next\n");
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].last_line, 3u);
  EXPECT_EQ(ev[1].first_line, 4u);
  EXPECT_EQ(ev[2].first_line, 5u);
  EXPECT_EQ(ev[3].first_line, 6u);
}

TEST(Assembler, RunawayTracebackIsClosedAtTheLineCap) {
  std::string text = "Traceback (most recent call last):\n";
  for (int i = 0; i < 5000; ++i) text += "  File \"r.py\", line 1, in f\n    f()\n";
  auto ev = Assemble(text);
  auto tbs = Tracebacks(ev);
  ASSERT_GE(tbs.size(), 1u);
  EXPECT_LE(tbs[0].lines.size(), 2000u);
  EXPECT_TRUE(tbs[0].truncated);
  size_t lines = 0;
  for (const auto& e : ev) lines += e.lines.size();
  EXPECT_EQ(lines, 10001u);
}

TEST(Assembler, TracebackWaitingForeverIsClosedAfterItsWindow) {
  std::string text = "[rank0]: Traceback (most recent call last):\n";
  for (int i = 0; i < 3000; ++i) text += "[rank1]: chatter\n";
  text += "[rank0]: KeyError: 1\n";
  auto ev = Assemble(text);
  auto tbs = Tracebacks(ev);
  ASSERT_EQ(tbs.size(), 1u);
  EXPECT_TRUE(tbs[0].truncated);
  EXPECT_EQ(tbs[0].lines.size(), 1u);
  EXPECT_EQ(ev.size(), 3002u);
}

TEST(Assembler, KeepLinePredicateSkipsUninterestingLines) {
  IngestOptions options;
  options.keep_line = [](std::string_view raw) { return raw.find("keep") != std::string_view::npos; };
  std::vector<Event> out;
  EventStream stream(0, options, [&out](Event&& e) { out.push_back(std::move(e)); });
  stream.Feed(
      "noise 1\nkeep me\nnoise 2\n"
      "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    noise()\nKeyError: 1\n"
      "INFO noise 3\nnoise 4\n");
  stream.Finish();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].Text(), "keep me");
  EXPECT_EQ(out[1].kind, EventKind::kTraceback);
  EXPECT_EQ(out[1].lines.size(), 4u);
  EXPECT_EQ(stream.counters().lines, 9u);
  EXPECT_EQ(stream.counters().events, 2u);
}

// decode_first_lines: the lines up to that number are events whatever keep_line says, fed in
// one buffer or in pieces; the lines after are skipped as before.
TEST(Assembler, TheFirstLinesAreDecodedWhateverKeepLineSays) {
  for (size_t piece : {size_t{1}, size_t{5}, size_t{1000}}) {
    IngestOptions options;
    options.keep_line = [](std::string_view raw) { return raw.find("keep") != std::string_view::npos; };
    options.decode_first_lines = 2;
    std::vector<Event> out;
    EventStream stream(0, options, [&out](Event&& e) { out.push_back(std::move(e)); });
    const std::string text = "noise 1\nnoise 2\nnoise 3\nkeep me\nnoise 4\n";
    for (size_t at = 0; at < text.size(); at += piece) stream.Feed(std::string_view(text).substr(at, piece));
    stream.Finish();
    ASSERT_EQ(out.size(), 3u) << "pieces of " << piece;
    EXPECT_EQ(out[0].Text(), "noise 1");
    EXPECT_EQ(out[1].Text(), "noise 2");
    EXPECT_EQ(out[2].Text(), "keep me");
    EXPECT_EQ(stream.counters().lines, 5u);
  }
}

TEST(ExceptionLine, RecognisesDottedAndBareTypes) {
  std::string_view type, text;
  EXPECT_TRUE(detail::ParseExceptionLine("torch.OutOfMemoryError: CUDA out of memory.", type, text));
  EXPECT_EQ(type, "torch.OutOfMemoryError");
  EXPECT_EQ(text, "CUDA out of memory.");
  EXPECT_TRUE(detail::ParseExceptionLine("KeyboardInterrupt", type, text));
  EXPECT_EQ(text, "");
  EXPECT_FALSE(detail::ParseExceptionLine("INFO: started", type, text));
  EXPECT_FALSE(detail::ParseExceptionLine("Killed", type, text));
  EXPECT_FALSE(detail::ParseExceptionLine("  File \"x\"", type, text));
  EXPECT_FALSE(detail::ParseExceptionLine("Decode batch. #running-req: 1", type, text));
}

}  // namespace
}  // namespace triage::ingest

namespace triage::ingest {
namespace {

TEST(MayStartMultiLine, FindsEveryStarterAnywhereInARawLine) {
  const std::string pad(37, 'x');
  for (std::string lit : {"Traceback", "File \"", "rror: ", "terminate called", "atchdog"}) {
    for (size_t at : {size_t{0}, size_t{5}, size_t{15}, size_t{16}, size_t{31}}) {
      std::string raw = pad.substr(0, at) + lit + pad;
      EXPECT_TRUE(detail::Assembler::MayStartMultiLine(raw)) << lit << " at " << at;
      EXPECT_TRUE(detail::Assembler::MayStartMultiLine(pad.substr(0, at) + lit)) << lit << " at end";
    }
  }
  EXPECT_TRUE(detail::Assembler::MayStartMultiLine(R"({"log":"[rank0]: Traceback (most recent call last):\n"})"));
  EXPECT_FALSE(detail::Assembler::MayStartMultiLine("INFO 05-26 07:50:26 [core.py:1] Trace back: the error path ok"));
  EXPECT_FALSE(detail::Assembler::MayStartMultiLine(""));
  EXPECT_FALSE(detail::Assembler::MayStartMultiLine("T"));
}

}  // namespace
}  // namespace triage::ingest

namespace triage::ingest {
namespace {

// Hardening item 7: a traceback of over 2,000 lines (a deep recursion) lost its exception line,
// and an unclassified failure got a frame line as its title. Its middle is let go (as line
// events: nothing is lost); its head, its tail and the exception that ends it stay one event.
TEST(Hardening, Item7_ALongTracebackKeepsItsExceptionLine) {
  std::string text = "Traceback (most recent call last):\n";
  for (int i = 0; i < 3000; ++i) text += "  File \"deep.py\", line 7, in recurse\n    return recurse(n - 1)\n";
  text += "ValueError: bad input 42\n";
  auto ev = Assemble(text);
  auto tbs = Tracebacks(ev);
  ASSERT_EQ(tbs.size(), 1u);
  ASSERT_FALSE(tbs[0].exceptions.empty());
  EXPECT_EQ(tbs[0].exceptions.back().type, "ValueError");
  EXPECT_EQ(tbs[0].exceptions.back().message, "bad input 42");
  EXPECT_FALSE(tbs[0].truncated);
  EXPECT_EQ(tbs[0].first_line, 1u);
  EXPECT_EQ(tbs[0].last_line, 6002u);
  size_t lines = 0;
  for (const auto& e : ev) lines += e.lines.size();
  EXPECT_EQ(lines, 6002u);
}

}  // namespace
}  // namespace triage::ingest
