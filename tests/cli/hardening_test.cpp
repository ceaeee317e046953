// Regression tests of the faults a probe of bad inputs, bad outputs and hostile logs found, one
// test named after each (the numbers are the items of the hardening issue).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "../gzip_text.h"
#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using triage::testing::Outcome;

fs::path Tmp() {
  const fs::path dir = fs::temp_directory_path() / ("triage-hardening-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Runs the built binary with the shipped rules, no user config; `prefix` is put before it in
// the shell command (a ulimit), `redirect` replaces the capture of standard output.
Outcome Triage(const std::string& args, const std::string& prefix = "", const std::string& redirect = "") {
  const fs::path tmp = Tmp();
  const std::string out = (tmp / "out").string(), err = (tmp / "err").string();
  const std::string cmd = prefix + " env -u TRIAGE_DB NO_COLOR=1 HOME=" + tmp.string() +
                          " XDG_CONFIG_HOME=" + (tmp / "config").string() +
                          " XDG_STATE_HOME=" + (tmp / "state").string() + " " + TRIAGE_BINARY + " " +
                          args + " </dev/null " + (redirect.empty() ? ">" + out : redirect) + " 2>" + err;
  Outcome r = triage::testing::RunShell("sh -c '" + cmd + "'", out, err);
  // sh reports a child killed by a signal as 128 + the signal
  if (r.code > 128 && r.code < 128 + 65) r.signal = r.code - 128;
  return r;
}

std::string Write(const std::string& name, const std::string& text) {
  const fs::path p = Tmp() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

const char* kCrash =
    "INFO starting\n"
    "Traceback (most recent call last):\n"
    "  File \"/srv/main.py\", line 3, in <module>\n"
    "    run()\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n";

std::string Gzip(const std::string& data) { return triage::testing::GzipText(data); }

// 1. A .gz whose CRC is wrong still gives the failure it holds, with the error.
TEST(Hardening, Item1_GzipWithABadCrcKeepsTheLinesBeforeTheError) {
  std::string gz = Gzip(kCrash);
  gz[gz.size() - 8] = char(gz[gz.size() - 8] ^ 0xff);  // the CRC32 of the trailer
  const std::string path = Write("badcrc.log.gz", gz);
  Outcome r = Triage("analyze --no-store --json " + path);
  EXPECT_NE(r.out.find("cuda.illegal_memory_access"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
  EXPECT_EQ(r.code, 2);
}

// 2. A report that cannot be written is an error, not exit 0.
TEST(Hardening, Item2_WriteErrorsOnStandardOutputAreReported) {
  const std::string path = Write("crash.log", kCrash);
  Outcome r = Triage("analyze --no-store --json " + path, "", ">/dev/full");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
}

// The bytes and characters a terminal acts on (triage/terminal_text.h), none of which may reach
// it from a log or a file name; tab and newline are the report's own.
void ExpectNothingATerminalActsOn(const std::string& shown, const std::string& what) {
  for (size_t i = 0; i < shown.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(shown[i]);
    ASSERT_FALSE((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        << what << ": byte " << int(c) << " at " << i << " in:\n" << shown;
    // U+0080..U+009F in UTF-8, and any byte of that range not after a lead byte
    const bool c1 = c == 0xc2 && i + 1 < shown.size() && (static_cast<unsigned char>(shown[i + 1]) & 0xe0) == 0x80;
    ASSERT_FALSE(c1) << what << ": a C1 control at " << i << " in:\n" << shown;
  }
}

// 4. Control characters of a log's lines and of a file's name are shown escaped, in the text
// report and in every table; JSON keeps them, escaped as JSON does.
TEST(Hardening, Item4_ControlCharactersFromLogsAndFileNamesAreShownEscaped) {
  const std::string hostile =
      "RuntimeError: CUDA error: an illegal memory access was encountered\r\x1b[2Kall good"
      "\x08\x08\x07\x7f \xc2\x9b" "2J \xc2\x9d" "0;title\x07 \x9b" "1m\n";
  std::string log = kCrash;
  log.replace(log.find("RuntimeError"), std::string::npos, hostile);
  // A file name that would set the window title and clear the screen.
  const std::string path = Write("crash\x1b]0;owned\x07\x1b[2J.log", log);
  const std::string db = (Tmp() / "controls.db").string();
  fs::remove(db);
  Outcome r = Triage("analyze --db " + db + " \"" + path + "\"");
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectNothingATerminalActsOn(r.out, "analyze");
  ExpectNothingATerminalActsOn(r.err, "analyze (stderr)");
  // (the decoder drops ANSI sequences from the text it shows, and puts U+FFFD for a byte that is
  // not UTF-8)
  EXPECT_NE(r.out.find("encountered^Mall good^H^H^G^? \\u009b2J \\u009d0;title^G \xef\xbf\xbd" "1m"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("crash\\x1b]0;owned^G\\x1b[2J.log"), std::string::npos) << r.out;
  for (const std::string cmd : {"history", "show 1", "search illegal", "stats"}) {
    Outcome shown = Triage(cmd + " --db " + db);
    EXPECT_EQ(shown.code, 0) << cmd << ": " << shown.err;
    ExpectNothingATerminalActsOn(shown.out, cmd);
  }
  // An error naming the file escapes its name too.
  Outcome missing = Triage("analyze --no-store \"" + path + ".absent\"");
  EXPECT_EQ(missing.code, 2);
  ExpectNothingATerminalActsOn(missing.err, "an error message");
  // JSON carries the raw text, escaped as JSON escapes it.
  Outcome json = Triage("analyze --no-store --json \"" + path + "\"");
  EXPECT_NE(json.out.find("encountered\\rall good\\b\\b\\u0007\\u007f \\u009b2J \\u009d0;title\\u0007"),
            std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("crash\\u001b]0;owned\\u0007\\u001b[2J.log"), std::string::npos) << json.out;
}

// 9. `--db ''` is bad usage, not the default database.
TEST(Hardening, Item9_AnEmptyDbPathIsRefused) {
  Outcome r = Triage("history --db \"\"");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
}

// 10. Under a file-size limit the process reports the failed write instead of dying of SIGXFSZ.
TEST(Hardening, Item10_AFileSizeLimitIsReportedNotASignal) {
  std::string big;
  for (int i = 0; i < 400; ++i) big += std::string("RuntimeError: CUDA error: out of memory ") + std::to_string(i) + "\n" + kCrash;
  const std::string log = Write("many.log", big);
  const std::string db = (Tmp() / "limited.db").string();
  fs::remove(db);
  Outcome r = Triage("analyze --db " + db + " " + log, "ulimit -f 16;", ">/dev/null");
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal;
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("triage: "), std::string::npos) << r.err;
}

// 11. An error names the path once.
TEST(Hardening, Item11_ErrorMessagesNameThePathOnce) {
  const std::string missing = (Tmp() / "absent.log").string();
  Outcome r = Triage("analyze --no-store " + missing);
  EXPECT_EQ(r.code, 2);
  const size_t first = r.err.find(missing);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(missing, first + 1), std::string::npos) << r.err;
}

// 13. --version says what the build linked for the prefilter, not a constant.
TEST(Hardening, Item13_VersionSaysWhetherHyperscanIsLinked) {
  Outcome r = Triage("--version");
  EXPECT_EQ(r.code, 0);
#if defined(TRIAGE_EXPECT_LINE_FINDER)
  EXPECT_NE(r.out.find("hyperscan: yes (Hyperscan "), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("hyperscan: no"), std::string::npos) << r.out;
#endif
}

// A store's password is never printed, in a URL or in libpq's keyword form, and the keyword
// form is a PostgreSQL store (not a SQLite file named after it, password included).
TEST(Hardening, AStoresPasswordIsNeverPrintedInAnyForm) {
  const fs::path cwd = Tmp() / "cwd";
  fs::create_directories(cwd);
  for (const std::string db : {"host=127.0.0.1 port=1 dbname=x password=hunter2 connect_timeout=2",
                               "postgresql://u:hunter2@127.0.0.1:1/x?connect_timeout=2",
                               "postgresql://127.0.0.1:1/x?password=hunter2&connect_timeout=2"}) {
    for (const char* command : {"status", "history", "config"}) {
      Outcome r = Triage(std::string(command) + " --db \"" + db + "\"", "cd " + cwd.string() + " &&");
      EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << command << ": " << r.out;
      EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << command << ": " << r.err;
    }
  }
  EXPECT_TRUE(fs::is_empty(cwd)) << "a file was created for a connection string";
}

// A PostgreSQL address whose server accepts and never answers: the command fails with the
// connection's timeout (ten seconds unless the address sets its own) instead of hanging; a hang
// would be ended by `timeout` and fail the test.
TEST(Hardening, AStoreThatNeverAnswersIsGivenUpAtItsConnectTimeout) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  // The kernel completes the handshake from the backlog; nothing is ever read or written.
  Outcome r = Triage("history --db postgresql://127.0.0.1:" + std::to_string(port) + "/triage",
                     "timeout 60");
  ::close(listener);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("timeout expired"), std::string::npos) << r.err;
}

}  // namespace
