// `[notify]`: a program run with each stored occurrence's JSON on stdin, and a webhook POSTed
// the same; the deadline, the rate limit, and what the configuration refuses.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstring>

#include "daemon_harness.h"
#include "loopback.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

std::string CudaOomCrash() {
  return "2026-11-02 09:24:00 INFO step 100 loss=0.42\n"
         "Traceback (most recent call last):\n"
         "  File \"/app/train.py\", line 88, in <module>\n"
         "    loss = model(batch)\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
         "total capacity of 79.15 GiB of which 1.02 GiB is free.\n";
}

class NotifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_ / "logs";
    fs::create_directories(dir_);
    fs::create_directories(tmp_ / "config");
    db_ = tmp_ / "watch.db";
    config_ = tmp_ / "config.toml";
  }
  // A shell script of the test's as the hook (triage itself runs it from its argv).
  fs::path Script(const std::string& name, const std::string& body) {
    fs::path p = tmp_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    chmod(p.c_str(), 0755);
    return p;
  }
  void Config(const std::string& notify) { std::ofstream(config_) << "[notify]\n" << notify; }
  std::unique_ptr<WatchProcess> Watch() {
    return std::make_unique<WatchProcess>(
        tmp_.path(), std::vector<std::string>{"--db", db_.string(), "--quiet-gap", "3600",
                                              "--config", config_.string(), "--metrics",
                                              "127.0.0.1:0", dir_.string()});
  }
  static int ServedPort(const WatchProcess& w) {
    const std::string key = "event=metrics.listen address=127.0.0.1:";
    int port = -1;
    WaitUntil(
        [&] {
          std::string log = w.Log();
          size_t k = log.find(key);
          if (k != std::string::npos) port = std::atoi(log.c_str() + k + key.size());
          return port > 0;
        },
        10s);
    return port;
  }
  double Metric(int port, const std::string& series) {
    return SampleValue(HttpGet(port, "/metrics").body, series);
  }
  int64_t Stored() { return TotalOccurrences(CauseOccurrences(db_)); }
  static std::vector<std::string> Lines(const fs::path& p) {
    std::vector<std::string> out;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(line);
    return out;
  }
  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  TempDir tmp_;
  fs::path dir_, db_, config_;
};

TEST_F(NotifyTest, TheHookGetsEachOccurrenceAsJsonOnItsStdin) {
  const fs::path out = tmp_ / "hook.jsonl";
  const fs::path hook = Script("hook.sh", "cat >> \"$1\"\necho >> \"$1\"\n");
  Config("exec = [\"" + hook.string() + "\", \"" + out.string() + "\"]\n");
  auto w = Watch();
  ASSERT_GT(ServedPort(*w), 0) << w->Log();
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(out).size() == 1; }, 10s)) << w->Log();
  const std::string first = Lines(out)[0];
  EXPECT_EQ(first.rfind("{\"text\":\"triage: new incident #1 on ", 0), 0u) << first;
  EXPECT_NE(first.find(": trainer: "), std::string::npos) << first;
  EXPECT_NE(first.find("(cuda.oom)\",\"event\":\"new\""), std::string::npos) << first;
  EXPECT_NE(first.find("\"incident\":{\"id\":1,\"service\":\"trainer\""), std::string::npos) << first;
  EXPECT_NE(first.find("\"cause\":\"cuda.oom\""), std::string::npos) << first;
  EXPECT_NE(first.find("torch.OutOfMemoryError: CUDA out of memory"), std::string::npos) << first;
  EXPECT_EQ(first.back(), '}');

  // The same crash again: a recurrence of incident 1.
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(out).size() == 2; }, 10s)) << w->Log();
  const std::string second = Lines(out)[1];
  EXPECT_EQ(second.rfind("{\"text\":\"triage: incident recurred #1 on ", 0), 0u) << second;
  EXPECT_NE(second.find("\"event\":\"recurrence\""), std::string::npos) << second;
  EXPECT_EQ(Stored(), 2);
  EXPECT_EQ(w->Stop(SIGTERM), 0) << w->Log();
}

TEST_F(NotifyTest, AHookPastItsDeadlineIsKilledWithItsChildrenAndIngestionGoesOn) {
  const fs::path pids = tmp_ / "hook.pids";
  // The hook starts a child and waits for it: the kill must reach the whole group.
  const fs::path hook = Script("hang.sh", "cat > /dev/null\nsleep 1000 &\necho $! >> \"$1\"\nwait\n");
  Config("exec = [\"" + hook.string() + "\", \"" + pids.string() + "\"]\ndeadline = 0.5\n");
  auto w = Watch();
  const int port = ServedPort(*w);
  ASSERT_GT(port, 0) << w->Log();
  Append(dir_ / "a.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(pids).size() == 1; }, 10s)) << w->Log();
  // While the hook hangs, another crash is read and stored as soon as ever.
  const auto written = std::chrono::steady_clock::now();
  Append(dir_ / "b.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 2; }, 10s)) << w->Log();
  EXPECT_LT(std::chrono::steady_clock::now() - written, 4s);
  const std::string timeout = "triage_notifications_total{channel=\"exec\",result=\"timeout\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(port, timeout) == 2; }, 10s))
      << HttpGet(port, "/metrics").body << w->Log();
  for (const auto& pid : Lines(pids))
    EXPECT_TRUE(WaitUntil([&] { return ProcessGone(std::stoi(pid)); }, 5s)) << "pid " << pid;
  EXPECT_NE(w->Log().find("event=notify.failed channel=exec"), std::string::npos) << w->Log();
  EXPECT_NE(w->Log().find("killed"), std::string::npos) << w->Log();
  EXPECT_TRUE(w->Running());
  EXPECT_EQ(w->Stop(SIGTERM), 0) << w->Log();
}

TEST_F(NotifyTest, TheRateLimitHoldsAndTheExcessIsCountedAndLogged) {
  const fs::path out = tmp_ / "hook.jsonl";
  const fs::path hook = Script("hook.sh", "cat >> \"$1\"\necho >> \"$1\"\n");
  Config("exec = [\"" + hook.string() + "\", \"" + out.string() + "\"]\nper_minute = 2\n");
  auto w = Watch();
  const int port = ServedPort(*w);
  ASSERT_GT(port, 0) << w->Log();
  for (const char* name : {"a.log", "b.log", "c.log", "d.log", "e.log"})
    Append(dir_ / name, {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 5; }, 10s)) << w->Log();
  const std::string limited = "triage_notifications_total{channel=\"exec\",result=\"limited\"}";
  const std::string sent = "triage_notifications_total{channel=\"exec\",result=\"sent\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(port, sent) == 2; }, 10s))
      << HttpGet(port, "/metrics").body << w->Log();
  std::this_thread::sleep_for(500ms);  // nothing more comes
  EXPECT_EQ(Lines(out).size(), 2u) << Slurp(out);
  EXPECT_EQ(Metric(port, limited), 3) << HttpGet(port, "/metrics").body;
  const std::string log = w->Log();
  size_t k = log.find("event=notify.limited");
  ASSERT_NE(k, std::string::npos) << log;
  EXPECT_EQ(log.find("event=notify.limited", k + 1), std::string::npos) << "logged once a burst\n" << log;
  EXPECT_NE(log.find("limit=2/min", k), std::string::npos) << log;
  EXPECT_EQ(w->Stop(SIGTERM), 0) << w->Log();
}

TEST_F(NotifyTest, TheWebhookIsPostedTheIncidentWithAOneLineText) {
  HttpReceiver receiver;
  ASSERT_GT(receiver.port(), 0);
  Config("webhook = \"http://127.0.0.1:" + std::to_string(receiver.port()) +
         "/hooks/triage?channel=gpu\"\n");
  auto w = Watch();
  const int port = ServedPort(*w);
  ASSERT_GT(port, 0) << w->Log();
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return receiver.requests().size() == 1; }, 10s)) << w->Log();
  const ReceivedRequest r = receiver.requests()[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/hooks/triage?channel=gpu");
  EXPECT_NE(r.headers.find("Content-Type: application/json"), std::string::npos) << r.headers;
  EXPECT_EQ(r.body.rfind("{\"text\":\"triage: new incident #1 on ", 0), 0u) << r.body;
  EXPECT_EQ(r.body.find('\n'), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"incident\":{\"id\":1,\"service\":\"trainer\""), std::string::npos) << r.body;
  const std::string sent = "triage_notifications_total{channel=\"webhook\",result=\"sent\"}";
  EXPECT_TRUE(WaitUntil([&] { return Metric(port, sent) == 1; }, 5s)) << HttpGet(port, "/metrics").body;
  EXPECT_EQ(w->Stop(SIGTERM), 0) << w->Log();
}

TEST_F(NotifyTest, AWebhookThatNeverAnswersIsGivenUpAtTheDeadline) {
  HttpReceiver silent(200, /*answer=*/false);
  ASSERT_GT(silent.port(), 0);
  Config("webhook = \"http://127.0.0.1:" + std::to_string(silent.port()) + "/\"\ndeadline = 0.5\n");
  auto w = Watch();
  const int port = ServedPort(*w);
  ASSERT_GT(port, 0) << w->Log();
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  const std::string timeout = "triage_notifications_total{channel=\"webhook\",result=\"timeout\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(port, timeout) == 1; }, 10s))
      << HttpGet(port, "/metrics").body << w->Log();
  EXPECT_EQ(silent.requests().size(), 1u);
  EXPECT_NE(w->Log().find("event=notify.failed channel=webhook"), std::string::npos) << w->Log();
  EXPECT_EQ(w->Stop(SIGTERM), 0) << w->Log();
}

TEST_F(NotifyTest, WhatIsNotSupportedIsAConfigurationErrorWithItsLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"webhook = \"https://hooks.example.com/x\"\n", "config.toml:2: notify.webhook: https is not supported"},
      {"exec = [\"notify-send\"]\n", "config.toml:2: notify.exec: the program must be an absolute path"},
      {"exec = \"/usr/bin/notify-send --urgency=critical\"\n", "config.toml:2: notify.exec: expected an array"},
      {"per_minute = 0\n", "config.toml:2: notify.per_minute: at least 1"},
  };
  for (const auto& [text, error] : cases) {
    Config(text);
    EXPECT_EQ(RunTriage({"watch", "--db", db_.string(), "--config", config_.string(), dir_.string()},
                        tmp_.path()),
              2)
        << text;
    const std::string err = Slurp(tmp_ / "run.err");
    EXPECT_NE(err.find(error), std::string::npos) << text << err;
    fs::remove(tmp_ / "run.err");
  }
}

}  // namespace
}  // namespace triage::daemon::testing
