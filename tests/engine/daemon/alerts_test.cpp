// Alerts that reach people: an https webhook with its certificate checked, the shapes of Slack,
// PagerDuty and Alertmanager with a severity by cause family and the incident's id as their
// key, the resolution `triage resolve` sends, a real Alertmanager, and a rate limit that never
// holds back a hardware fault and sends a summary of what it held.
#include <gtest/gtest.h>

#include <regex>

#include "notify_fixture.h"
#include "triage/daemon/alert_severity.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

// A GPU that fell off the bus: the kernel's Xid line, then the process's end.
std::string XidCrash() {
  return "2026-11-02 09:25:00 INFO step 7 loss=0.40\n"
         "[  812.044] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.\n"
         "RuntimeError: CUDA error: unspecified launch failure\n";
}

class AlertsTest : public NotifyingWatchTest {
 protected:
  int Resolve(int64_t id) {
    return RunTriage({"resolve", std::to_string(id), "--db", db_.string(), "--config",
                      config().string()},
                     tmp_.path());
  }
  // A self-signed certificate for "localhost" and 127.0.0.1 made by openssl in `dir`; false
  // when openssl is missing or fails.
  bool MakeCertificate(const fs::path& dir, const std::string& name) {
    fs::create_directories(dir);
    const std::string openssl = FindProgram("openssl");
    if (openssl.empty()) return false;
    Child req({openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
               "/CN=" + name, "-addext", "subjectAltName=DNS:" + name + ",IP:127.0.0.1",
               "-keyout", (dir / "key.pem").string(), "-out", (dir / "cert.pem").string()},
              dir / "openssl.out");
    return req.Wait(60s) == 0;
  }
  // Starts tls_receiver.py with the certificate of `dir`; its port, or -1.
  int StartTlsReceiver(const fs::path& dir) {
    const std::string python = FindProgram("python3");
    if (python.empty()) return -1;
    receiver_ = std::make_unique<Child>(
        std::vector<std::string>{python, std::string(TRIAGE_TEST_DATA) + "/engine/daemon/tls_receiver.py",
                                 (dir / "cert.pem").string(), (dir / "key.pem").string(),
                                 (tmp_ / "tls.port").string(), received().string()},
        tmp_ / "tls.log");
    if (!WaitUntil([&] { return fs::exists(tmp_ / "tls.port"); }, 20s)) return -1;
    return std::stoi(ReadText(tmp_ / "tls.port"));
  }
  fs::path received() const { return tmp_ / "tls.received"; }

  std::unique_ptr<Child> receiver_;
};

TEST_F(AlertsTest, AnHttpsWebhookIsPostedWithTheServersCertificateChecked) {
  ASSERT_TRUE(MakeCertificate(tmp_ / "ca", "localhost")) << ReadText(tmp_ / "ca" / "openssl.out");
  const int port = StartTlsReceiver(tmp_ / "ca");
  ASSERT_GT(port, 0) << ReadText(tmp_ / "tls.log");
  Config("webhook = \"https://localhost:" + std::to_string(port) +
         "/hooks/T0KEN-sekrit\"\nca_file = \"" + (tmp_ / "ca" / "cert.pem").string() + "\"\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Lines(received()).size() == 2; }, 15s))
      << w_->Log() << ReadText(tmp_ / "tls.log");
  const auto lines = Lines(received());
  EXPECT_EQ(lines[0], "target=/hooks/T0KEN-sekrit host=localhost:" + std::to_string(port) +
                          " sni=localhost");
  EXPECT_EQ(lines[1].rfind("{\"text\":\"triage: new incident #1 on ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("\"severity\":\"error\",\"family\":\"memory\",\"dedup_key\":\"triage-1\""),
            std::string::npos)
      << lines[1];
  const std::string sent = "triage_notifications_total{channel=\"webhook\",result=\"sent\"}";
  EXPECT_TRUE(WaitUntil([&] { return Metric(sent) == 1; }, 5s)) << Exposition();
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(AlertsTest, AnHttpsWebhookWhoseCertificateDoesNotVerifyIsRefused) {
  ASSERT_TRUE(MakeCertificate(tmp_ / "trusted", "localhost"));
  ASSERT_TRUE(MakeCertificate(tmp_ / "other", "localhost"));
  const int port = StartTlsReceiver(tmp_ / "other");  // a certificate the CA file does not hold
  ASSERT_GT(port, 0) << ReadText(tmp_ / "tls.log");
  Config("webhook = \"https://localhost:" + std::to_string(port) +
         "/hooks/T0KEN-sekrit?key=alsosekrit\"\nca_file = \"" +
         (tmp_ / "trusted" / "cert.pem").string() + "\"\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  const std::string failed = "triage_notifications_total{channel=\"webhook\",result=\"failed\"}";
  ASSERT_TRUE(WaitUntil([&] { return Metric(failed) == 1; }, 15s)) << Exposition() << w_->Log();
  EXPECT_TRUE(Lines(received()).empty()) << ReadText(received());
  const std::string log = w_->Log();
  EXPECT_NE(log.find("event=notify.failed channel=webhook"), std::string::npos) << log;
  EXPECT_NE(log.find("https://localhost:" + std::to_string(port) + ": TLS handshake: certificate "
                     "not trusted: self-signed certificate"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("sekrit"), std::string::npos) << log;
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
  EXPECT_EQ(w_->Log().find("sekrit"), std::string::npos);
}

TEST_F(AlertsTest, PagerDutyIsTriggeredWithTheIncidentsKeyAndResolvedByTriageResolve) {
  HttpReceiver receiver;
  ASSERT_GT(receiver.port(), 0);
  Config("webhook = \"http://127.0.0.1:" + std::to_string(receiver.port()) +
         "/v2/enqueue\"\nformat = \"pagerduty\"\nrouting_key = \"R0UTING\"\n"
         "link = \"https://triage.example/incidents/\"\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return receiver.requests().size() == 1; }, 10s)) << w_->Log();
  const std::string trigger = receiver.requests()[0].body;
  EXPECT_EQ(trigger.rfind("{\"routing_key\":\"R0UTING\",\"event_action\":\"trigger\","
                          "\"dedup_key\":\"triage-1\",\"payload\":{\"summary\":\"triage: new "
                          "incident #1 on ",
                          0),
            0u)
      << trigger;
  EXPECT_NE(trigger.find("\"severity\":\"error\",\"component\":\"trainer\",\"group\":\"memory\","
                         "\"class\":\"cuda.oom\""),
            std::string::npos)
      << trigger;
  EXPECT_NE(trigger.find("\"links\":[{\"href\":\"https://triage.example/incidents/1\""),
            std::string::npos)
      << trigger;
  EXPECT_EQ(Resolve(1), 0) << ReadText(tmp_ / "run.err");
  ASSERT_EQ(receiver.requests().size(), 2u);
  EXPECT_EQ(receiver.requests()[1].body,
            "{\"routing_key\":\"R0UTING\",\"event_action\":\"resolve\",\"dedup_key\":\"triage-1\"}");
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

TEST_F(AlertsTest, SlackGetsMrkdwnWithTheSeverityAndNoMentionFromTheLog) {
  HttpReceiver receiver;
  ASSERT_GT(receiver.port(), 0);
  Config("webhook = \"http://127.0.0.1:" + std::to_string(receiver.port()) +
         "/services/T/B/X\"\nformat = \"slack\"\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "svc<!channel>&@here.log", {XidCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return receiver.requests().size() == 1; }, 10s)) << w_->Log();
  const std::string body = receiver.requests()[0].body;
  EXPECT_EQ(body.rfind("{\"text\":\"*[critical]* triage: new incident #1 on ", 0), 0u) << body;
  EXPECT_NE(body.find("svc\u2039!channel\u203a&amp;\uff20here"), std::string::npos) << body;
  EXPECT_EQ(body.find("<!channel>"), std::string::npos) << body;
  EXPECT_NE(body.find("(gpu.hardware_fault)"), std::string::npos) << body;
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

// A burst of 10 crashes with a limit of 2 a minute: two go out, the hardware fault goes out
// although the limit is reached, and one summary names the 7 held back by cause.
TEST_F(AlertsTest, TheRateLimitNeverHoldsBackAHardwareFaultAndSummarisesWhatItHeld) {
  const fs::path out = tmp_ / "hook.out";
  const fs::path script = tmp_ / "hook.sh";
  std::ofstream(script) << "#!/bin/sh\ncat >> \"$1\"\necho >> \"$1\"\n";
  chmod(script.c_str(), 0755);
  Config("exec = [\"" + script.string() + "\", \"" + out.string() + "\"]\nper_minute = 2\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  // Nine OOMs, then the hardware fault once they are stored: the limit is reached by then.
  for (int i = 0; i < 9; ++i) Append(dir_ / ("svc" + std::to_string(i) + ".log"), {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) == 9; }, 20s))
      << w_->Log();
  Append(dir_ / "svc9.log", {XidCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return TotalOccurrences(CauseOccurrences(db_)) == 10; }, 20s))
      << w_->Log();
  ASSERT_TRUE(WaitUntil([&] { return Lines(out).size() == 4; }, 20s)) << ReadText(out) << w_->Log();
  int hardware = 0, others = 0;
  std::string summary;
  for (const std::string& line : Lines(out)) {
    if (line.find("\"event\":\"held_back\"") != std::string::npos)
      summary = line;
    else if (line.find("\"severity\":\"critical\",\"family\":\"hardware\"") != std::string::npos)
      ++hardware;
    else if (line.find("\"severity\":\"error\",\"family\":\"memory\"") != std::string::npos)
      ++others;
  }
  EXPECT_EQ(hardware, 1) << ReadText(out);
  EXPECT_EQ(others, 2) << ReadText(out);
  EXPECT_NE(summary.find(": 7 incidents held back in the last minute: 7 cuda.oom\",\"event\":"
                         "\"held_back\""),
            std::string::npos)
      << ReadText(out);
  EXPECT_NE(summary.find("\"held\":{\"total\":7,\"causes\":{\"cuda.oom\":7}}"), std::string::npos)
      << summary;
  const std::string limited = "triage_notifications_total{channel=\"exec\",result=\"limited\"}";
  EXPECT_EQ(Metric(limited), 7) << Exposition();
  EXPECT_NE(w_->Log().find("event=notify.held_back count=7"), std::string::npos) << w_->Log();
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

// A real Alertmanager (Debian's prometheus-alertmanager), started on loopback: the alert fires
// with the incident's labels and annotations, and `triage resolve` ends it.
TEST_F(AlertsTest, ARealAlertmanagerGetsTheAlertFiringAndThenResolved) {
  std::string alertmanager = FindProgram("prometheus-alertmanager");
  if (alertmanager.empty()) alertmanager = FindProgram("alertmanager");
  if (alertmanager.empty())
    GTEST_SKIP() << "Alertmanager is not installed (scripts/deps.sh installs prometheus-alertmanager)";
  const fs::path am = tmp_ / "alertmanager";
  fs::create_directories(am / "data");
  std::ofstream(am / "alertmanager.yml") << "route:\n  receiver: nobody\nreceivers:\n  - name: nobody\n";
  const int am_port = FreePort();
  ASSERT_GT(am_port, 0);
  Child server({alertmanager, "--config.file=" + (am / "alertmanager.yml").string(),
                "--storage.path=" + (am / "data").string(),
                "--web.listen-address=127.0.0.1:" + std::to_string(am_port),
                "--cluster.listen-address="},
               am / "alertmanager.log");
  ASSERT_TRUE(WaitUntil([&] { return HttpGet(am_port, "/-/ready").status == 200; }, 30s))
      << ReadText(am / "alertmanager.log");
  Config("webhook = \"http://127.0.0.1:" + std::to_string(am_port) +
         "/api/v2/alerts\"\nformat = \"alertmanager\"\nlink = \"http://triage.example/incidents/\"\n");
  ASSERT_NO_FATAL_FAILURE(Start());
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  std::string alerts;
  ASSERT_TRUE(WaitUntil(
      [&] {
        alerts = HttpGet(am_port, "/api/v2/alerts").body;
        return alerts.find("\"incident\":\"1\"") != std::string::npos;
      },
      15s))
      << alerts << w_->Log() << ReadText(am / "alertmanager.log");
  for (const char* label :
       {"\"alertname\":\"TriageIncident\"", "\"cause\":\"cuda.oom\"", "\"family\":\"memory\"",
        "\"severity\":\"error\"", "\"service\":\"trainer\"", "\"host\":\"",
        "\"link\":\"http://triage.example/incidents/1\"", "\"remedy\":\"", "\"title\":\"",
        "\"state\":\"active\""})
    EXPECT_NE(alerts.find(label), std::string::npos) << label << "\n" << alerts;
  EXPECT_EQ(Resolve(1), 0) << ReadText(tmp_ / "run.err");
  EXPECT_TRUE(WaitUntil(
      [&] {
        alerts = HttpGet(am_port, "/api/v2/alerts").body;
        return alerts.find("\"incident\":\"1\"") == std::string::npos;
      },
      15s))
      << alerts;
  EXPECT_EQ(w_->Stop(SIGTERM), 0) << w_->Log();
}

// Every cause family's severity as the table has it, in the shipped alert rules too: critical
// ones match the hardware rule, warnings the configuration rule, errors neither (the error
// rule takes what the others do not).
TEST(AlertRules, FollowTheSeverityTable) {
  const std::string rules =
      ReadText(std::string(TRIAGE_SOURCE_DIR) + "/packaging/prometheus/triage-alerts.yml");
  auto regex_of = [&](const std::string& alert) {
    const size_t at = rules.find("- alert: " + alert + "\n");
    EXPECT_NE(at, std::string::npos) << alert;
    const size_t start = rules.find("cause=~\"", at);
    EXPECT_NE(start, std::string::npos) << alert;
    const size_t end = rules.find('"', start + 8);
    std::string re = rules.substr(start + 8, end - start - 8);
    std::string unescaped;  // the YAML block holds PromQL's string: \\. is \.
    for (size_t i = 0; i < re.size(); ++i) {
      if (re[i] == '\\' && i + 1 < re.size() && re[i + 1] == '\\') ++i;
      unescaped += re[i];
    }
    return std::regex(unescaped);
  };
  const std::regex hardware = regex_of("TriageHardwareFault");
  const std::regex config = regex_of("TriageConfigIncident");
  for (const auto& row : AlertClassTable()) {
    const std::string id(row.cause);
    for (const std::string& cause : {id, id + ".finer"}) {
      EXPECT_EQ(std::regex_match(cause, hardware), row.cls.severity == "critical") << cause;
      EXPECT_EQ(std::regex_match(cause, config), row.cls.severity == "warning") << cause;
    }
  }
}

}  // namespace
}  // namespace triage::daemon::testing
