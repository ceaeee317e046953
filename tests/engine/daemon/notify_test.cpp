// `[notify]`: a program run with each stored occurrence's JSON on stdin, and a webhook POSTed
// the same; the deadline, the rate limit, and what the configuration refuses.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstring>

#include "notify_fixture.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

class NotifyTest : public NotifyingWatchTest {
 protected:
  // A shell script of the test's as the hook (triage itself runs it from its argv), given the
  // file `out` as its argument, and `[notify]` settings besides.
  fs::path Hook(const std::string& body, const std::string& settings = "") {
    const fs::path script = tmp_ / "hook.sh";
    const fs::path out = tmp_ / "hook.out";
    std::ofstream(script) << "#!/bin/sh\n" << body;
    chmod(script.c_str(), 0755);
    Config("exec = [\"" + script.string() + "\", \"" + out.string() + "\"]\n" + settings);
    return out;
  }
  // A hook that appends each document it gets to its file, one a line.
  fs::path AppendingHook(const std::string& settings = "") {
    return Hook("cat >> \"$1\"\necho >> \"$1\"\n", settings);
  }
  int64_t Stored() { return TotalOccurrences(CauseOccurrences(db_)); }
};

TEST_F(NotifyTest, TheHookGetsEachOccurrenceAsJsonOnItsStdin) {
  const fs::path out = AppendingHook();
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(out).size() == 1; }, 10s)) << w_->Log();
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
  ASSERT_TRUE(WaitUntil([&] { return Lines(out).size() == 2; }, 10s)) << w_->Log();
  const std::string second = Lines(out)[1];
  EXPECT_EQ(second.rfind("{\"text\":\"triage: incident recurred #1 on ", 0), 0u) << second;
  EXPECT_NE(second.find("\"event\":\"recurrence\""), std::string::npos) << second;
  EXPECT_EQ(Stored(), 2);
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(NotifyTest, AHookPastItsDeadlineIsKilledWithItsChildrenAndIngestionGoesOn) {
  // The hook starts a child, notes its pid and waits for it: the kill must reach the group.
  const fs::path pids = Hook("cat > /dev/null\nsleep 1000 &\necho $! >> \"$1\"\nwait\n", "deadline = 0.5\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "a.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(pids).size() == 1; }, 10s)) << w_->Log();
  // While the hook hangs, another crash is read and stored as soon as ever.
  const auto written = std::chrono::steady_clock::now();
  Append(dir_ / "b.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 2; }, 10s)) << w_->Log();
  EXPECT_LT(std::chrono::steady_clock::now() - written, 4s);
  const std::string timeout = "triage_notifications_total{channel=\"exec\",result=\"timeout\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(timeout) == 2; }, 10s))
      << Exposition() << w_->Log();
  for (const auto& pid : Lines(pids))
    EXPECT_TRUE(WaitUntil([&] { return ProcessGone(std::stoi(pid)); }, 5s)) << "pid " << pid;
  EXPECT_NE(w_->Log().find("event=notify.failed channel=exec"), std::string::npos) << w_->Log();
  EXPECT_NE(w_->Log().find("killed"), std::string::npos) << w_->Log();
  EXPECT_TRUE(w_->Running());
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(NotifyTest, TheRateLimitHoldsAndTheExcessIsCountedAndLogged) {
  const fs::path out = AppendingHook("per_minute = 2\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  for (const char* name : {"a.log", "b.log", "c.log", "d.log", "e.log"})
    Append(dir_ / name, {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 5; }, 10s)) << w_->Log();
  const std::string limited = "triage_notifications_total{channel=\"exec\",result=\"limited\"}";
  const std::string sent = "triage_notifications_total{channel=\"exec\",result=\"sent\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(sent) == 2; }, 10s))
      << Exposition() << w_->Log();
  std::this_thread::sleep_for(500ms);  // nothing more comes
  EXPECT_EQ(Lines(out).size(), 2u) << ReadText(out);
  EXPECT_EQ(Metric(limited), 3) << Exposition();
  const std::string log = w_->Log();
  size_t k = log.find("event=notify.limited");
  ASSERT_NE(k, std::string::npos) << log;
  EXPECT_EQ(log.find("event=notify.limited", k + 1), std::string::npos) << "logged once a burst\n" << log;
  EXPECT_NE(log.find("limit=2/min", k), std::string::npos) << log;
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

// The summary line is what a chat shows: a log's words in it (here a file name) ping nobody and
// reorder nothing.
TEST_F(NotifyTest, TheTextCarriesNoChatMarkupFromTheLog) {
  const fs::path out = AppendingHook();
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "svc<!channel>@here\u202e.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(out).size() == 1; }, 10s)) << w_->Log();
  const std::string line = Lines(out)[0];
  const std::string text = line.substr(0, line.find("\",\"event\""));
  EXPECT_EQ(text.find("<!channel>"), std::string::npos) << text;
  EXPECT_EQ(text.find("@here"), std::string::npos) << text;
  EXPECT_EQ(text.find("\u202e"), std::string::npos) << text;
  EXPECT_NE(text.find("svc\u2039!channel\u203a\uff20here"), std::string::npos) << text;
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(NotifyTest, TheWebhookIsPostedTheIncidentWithAOneLineText) {
  HttpReceiver receiver;
  ASSERT_GT(receiver.port(), 0);
  Config("webhook = \"http://127.0.0.1:" + std::to_string(receiver.port()) +
         "/hooks/triage?channel=gpu\"\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return receiver.requests().size() == 1; }, 10s)) << w_->Log();
  const ReceivedRequest r = receiver.requests()[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/hooks/triage?channel=gpu");
  EXPECT_NE(r.headers.find("Content-Type: application/json"), std::string::npos) << r.headers;
  EXPECT_EQ(r.body.rfind("{\"text\":\"triage: new incident #1 on ", 0), 0u) << r.body;
  EXPECT_EQ(r.body.find('\n'), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"incident\":{\"id\":1,\"service\":\"trainer\""), std::string::npos) << r.body;
  const std::string sent = "triage_notifications_total{channel=\"webhook\",result=\"sent\"}";
  EXPECT_TRUE(WaitUntil([&] { return Metric(sent) == 1; }, 5s)) << Exposition();
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(NotifyTest, AWebhookThatNeverAnswersIsGivenUpAtTheDeadline) {
  HttpReceiver silent(200, /*answer=*/false);
  ASSERT_GT(silent.port(), 0);
  Config("webhook = \"http://127.0.0.1:" + std::to_string(silent.port()) + "/\"\ndeadline = 0.5\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  const std::string timeout = "triage_notifications_total{channel=\"webhook\",result=\"timeout\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(timeout) == 1; }, 10s))
      << Exposition() << w_->Log();
  EXPECT_EQ(silent.requests().size(), 1u);
  EXPECT_NE(w_->Log().find("event=notify.failed channel=webhook"), std::string::npos) << w_->Log();
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(NotifyTest, WhatIsNotSupportedIsAConfigurationErrorWithItsLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"webhook = \"ftp://hooks.example.com/x\"\n", "config.toml:2: notify.webhook: expected an http:// or https:// URL"},
      {"webhook = \"https://events.pagerduty.com/v2/enqueue\"\nformat = \"pagerduty\"\n",
       "config.toml:3: notify.format: \"pagerduty\" needs notify.routing_key"},
      {"webhook = \"https://hooks.example.com/x\"\nformat = \"teams\"\n", "config.toml:3: notify.format: expected \"json\""},
      {"format = \"slack\"\n", "config.toml:2: notify.format: \"slack\" is a webhook's format; set notify.webhook"},
      {"exec = [\"notify-send\"]\n", "config.toml:2: notify.exec: the program must be an absolute path"},
      {"exec = \"/usr/bin/notify-send --urgency=critical\"\n", "config.toml:2: notify.exec: expected an array"},
      {"per_minute = 0\n", "config.toml:2: notify.per_minute: at least 1"},
      {"per_minute = nan\n", "config.toml:2: notify.per_minute: expected a finite non-negative number"},
      {"deadline = inf\n", "config.toml:2: notify.deadline: expected a finite non-negative number"},
  };
  for (const auto& [text, error] : cases) {
    Config(text);
    EXPECT_EQ(RunTriage({"watch", "--db", db_.string(), "--config", config().string(), dir_.string()},
                        tmp_.path()),
              2)
        << text;
    const std::string err = ReadText(tmp_ / "run.err");
    EXPECT_NE(err.find(error), std::string::npos) << text << err;
    fs::remove(tmp_ / "run.err");
  }
}

}  // namespace
}  // namespace triage::daemon::testing
