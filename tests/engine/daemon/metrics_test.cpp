// `triage watch --metrics`: a real Prometheus server scrapes the incident a crash produced;
// promtool accepts the exposition and the shipped alerting rules; /healthz; the textfile.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

#include "daemon_harness.h"
#include "loopback.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

class MetricsTest : public WatchFolderTest {
 protected:
  std::vector<std::string> Args(const std::string& listen) const {
    return {"--db", db_.string(), "--quiet-gap", "3600", "--metrics", listen, dir_.string()};
  }
  int64_t Stored() { return TotalOccurrences(CauseOccurrences(db_)); }
};

TEST_F(MetricsTest, PrometheusScrapesTheIncidentOfACrash) {
  const std::string prometheus = FindProgram("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus is not installed (scripts/deps.sh installs it)";
  const int daemon_port = FreePort();
  const int prom_port = FreePort();
  ASSERT_GT(daemon_port, 0);
  ASSERT_GT(prom_port, 0);
  WatchProcess w(tmp_.path(), Args("127.0.0.1:" + std::to_string(daemon_port)));
  ASSERT_EQ(MetricsPort(w), daemon_port) << w.Log();

  fs::path config = tmp_ / "prometheus.yml";
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                           "scrape_configs:\n  - job_name: triage\n    static_configs:\n"
                           "      - targets: ['127.0.0.1:"
                        << daemon_port << "']\n";
  Child prom({prometheus, "--config.file=" + config.string(),
              "--storage.tsdb.path=" + (tmp_ / "prometheus-data").string(),
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
             tmp_ / "prometheus.log");

  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 1; }, 10s)) << w.Log();

  // Until the scrape that follows the incident has been ingested.
  const std::string query = "/api/v1/query?query=" + UrlEncode("triage_incidents_total");
  HttpAnswer answer;
  const bool seen = WaitUntil(
      [&] {
        answer = HttpGet(prom_port, query);
        return answer.status == 200 && answer.body.find("\"cause\":\"cuda.oom\"") != std::string::npos;
      },
      30s);
  ASSERT_TRUE(seen) << "last answer " << answer.status << ": " << answer.body << "\n"
                    << ReadText(tmp_ / "prometheus.log").substr(0, 4000);
  EXPECT_NE(answer.body.find("\"__name__\":\"triage_incidents_total\""), std::string::npos) << answer.body;
  EXPECT_NE(answer.body.find("\"service\":\"trainer\""), std::string::npos) << answer.body;
  EXPECT_NE(answer.body.find("\"job\":\"triage\""), std::string::npos) << answer.body;
  EXPECT_NE(answer.body.find(",\"1\"]"), std::string::npos) << "one occurrence: " << answer.body;
  // The daemon's own view agrees with what Prometheus holds.
  HttpAnswer up = HttpGet(prom_port, "/api/v1/query?query=" + UrlEncode("up{job=\"triage\"}"));
  EXPECT_NE(up.body.find(",\"1\"]"), std::string::npos) << up.body;
  prom.Stop();
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
}

TEST_F(MetricsTest, TheExpositionPassesPromtoolAndCountsWhatWasRead) {
  const std::string promtool = FindProgram("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed (scripts/deps.sh installs prometheus)";
  WatchProcess w(tmp_.path(), Args("127.0.0.1:0"));
  const int port = MetricsPort(w);
  ASSERT_GT(port, 0) << w.Log();
  const std::string crash = CudaOomCrash();
  Append(dir_ / "trainer.log", {crash}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 1; }, 10s)) << w.Log();

  HttpAnswer m;
  ASSERT_TRUE(WaitUntil(
      [&] {
        m = HttpGet(port, "/metrics");
        return m.body.find("triage_incidents_total{") != std::string::npos;
      },
      5s))
      << m.status << " " << m.body;
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << m.headers;
  for (const char* family :
       {"triage_incidents_total counter", "triage_lines_read_total counter",
        "triage_bytes_read_total counter", "triage_files_watched gauge",
        "triage_read_lag_seconds gauge", "triage_verifications_total counter",
        "triage_last_incident_timestamp_seconds gauge", "triage_build_info gauge"})
    EXPECT_NE(m.body.find(std::string("# TYPE ") + family), std::string::npos) << family << "\n" << m.body;
  EXPECT_NE(m.body.find("triage_incidents_total{service=\"trainer\",cause=\"cuda.oom\",host=\""),
            std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("triage_bytes_read_total " + std::to_string(crash.size()) + "\n"),
            std::string::npos)
      << m.body;
  const auto lines = std::count(crash.begin(), crash.end(), '\n');
  EXPECT_NE(m.body.find("triage_lines_read_total " + std::to_string(lines) + "\n"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("triage_files_watched 1\n"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("triage_build_info{version=\""), std::string::npos) << m.body;
  // The last incident's time: within the last minute.
  size_t k = m.body.find("\ntriage_last_incident_timestamp_seconds ");
  ASSERT_NE(k, std::string::npos);
  double at = std::atof(m.body.c_str() + k + 40);
  EXPECT_NEAR(at, static_cast<double>(std::time(nullptr)), 60) << m.body;

  fs::path exposition = tmp_ / "metrics.txt";
  std::ofstream(exposition) << m.body;
  Child check({promtool, "check", "metrics"}, tmp_ / "promtool.out", exposition);
  EXPECT_EQ(check.Wait(30s), 0) << ReadText(tmp_ / "promtool.out");

  HttpAnswer health = HttpGet(port, "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  EXPECT_EQ(HttpGet(port, "/other").status, 404);
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
}

TEST_F(MetricsTest, TheShippedAlertingRulesPassPromtool) {
  const std::string promtool = FindProgram("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed (scripts/deps.sh installs prometheus)";
  const std::string rules = std::string(TRIAGE_SOURCE_DIR) + "/packaging/prometheus/triage-alerts.yml";
  Child check({promtool, "check", "rules", rules}, tmp_ / "check.out");
  EXPECT_EQ(check.Wait(30s), 0) << ReadText(tmp_ / "check.out");
  // Their cases: a series that appears with its first occurrence fires, as does a recurrence.
  const std::string cases = std::string(TRIAGE_SOURCE_DIR) + "/packaging/prometheus/triage-alerts.test.yml";
  Child test({promtool, "test", "rules", cases}, tmp_ / "test.out");
  EXPECT_EQ(test.Wait(30s), 0) << ReadText(tmp_ / "test.out");
}

TEST_F(MetricsTest, TheTextfileIsWrittenWholeForNodeExporter) {
  fs::path prom = tmp_ / "textfile" / "triage.prom";
  fs::create_directories(prom.parent_path());
  std::ofstream(tmp_ / "config.toml") << "[metrics]\ntextfile = \"" << prom.string() << "\"\n";
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--quiet-gap", "3600", "--config",
                               (tmp_ / "config.toml").string(), dir_.string()});
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(prom); }, 10s)) << w.Log();
  Append(dir_ / "trainer.log", {CudaOomCrash()}, 0, 1);
  ASSERT_TRUE(WaitUntil([&] { return Stored() == 1; }, 10s)) << w.Log();
  // Written again at the stop, with the incident; nothing else is left in the folder.
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
  const std::string text = ReadText(prom);
  EXPECT_NE(text.find("triage_incidents_total{service=\"trainer\",cause=\"cuda.oom\""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.substr(text.size() - 1), "\n");
  EXPECT_EQ(fs::status(prom).permissions() & fs::perms::others_read, fs::perms::others_read);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(prom.parent_path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  const std::string promtool = FindProgram("promtool");
  if (!promtool.empty()) {
    Child check({promtool, "check", "metrics"}, tmp_ / "promtool.out", prom);
    EXPECT_EQ(check.Wait(30s), 0) << ReadText(tmp_ / "promtool.out");
  }
}

// One client (one source address, 127.0.0.2) holding `count` connections to 127.0.0.1:port,
// each with a request that never ends, opened again as soon as the server closes it.
class SlowClient {
 public:
  SlowClient(int port, size_t count) : port_(port), fds_(count, -1) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SlowClient() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  SlowClient(const SlowClient&) = delete;
  SlowClient& operator=(const SlowClient&) = delete;
  size_t opened() const { return opened_; }

 private:
  int Open() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in from{}, to{};
    from.sin_family = to.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(0x7f000002);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(static_cast<uint16_t>(port_));
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)) {
      if (fd >= 0) close(fd);
      return -1;
    }
    return fd;
  }
  // A request's first line at the start, then a header line now and then, never the end.
  void Run() {
    const std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    const std::string more = "X-Slow: 1\r\n";
    while (!stop_) {
      for (int& fd : fds_) {
        char b[256];
        const ssize_t r = fd >= 0 ? recv(fd, b, sizeof b, MSG_DONTWAIT) : 0;
        if (fd >= 0 && (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))) {
          close(fd);  // closed by the server
          fd = -1;
        }
        if (fd < 0) {
          if ((fd = Open()) < 0) continue;
          ++opened_;
          (void)send(fd, head.data(), head.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
          (void)send(fd, more.data(), more.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
      }
      std::this_thread::sleep_for(200ms);
    }
  }

  const int port_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> opened_{0};
  std::thread thread_;
};

// 256 slow connections of one client take that client's share of the server, not the server:
// /healthz and /metrics are answered to another client at once, again and again.
TEST_F(MetricsTest, OneClientsSlowConnectionsLeaveHealthzAndMetricsServed) {
  WatchProcess w(tmp_.path(), Args("127.0.0.1:0"));
  const int port = MetricsPort(w);
  ASSERT_GT(port, 0) << w.Log();
  SlowClient slow(port, 256);
  ASSERT_TRUE(WaitUntil([&] { return slow.opened() >= 256; }, 10s)) << slow.opened();
  std::this_thread::sleep_for(500ms);
  for (int k = 0; k < 6; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const HttpAnswer health = HttpGet(port, "/healthz");
    const HttpAnswer metrics = HttpGet(port, "/metrics");
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(health.status, 200) << "probe " << k;
    EXPECT_EQ(metrics.status, 200) << "scrape " << k;
    EXPECT_LT(took, 2s) << "probe " << k;
    std::this_thread::sleep_for(1s);
  }
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
}

TEST_F(MetricsTest, AnAddressThatCannotBeServedStopsTheStart) {
  EXPECT_EQ(RunTriage({"watch", "--db", db_.string(), "--metrics", "nowhere:99999", dir_.string()},
                      tmp_.path()),
            2);
  std::string err = ReadText(tmp_ / "run.err");
  EXPECT_NE(err.find("metrics"), std::string::npos) << err;
  EXPECT_NE(err.find("port"), std::string::npos) << err;
}

}  // namespace
}  // namespace triage::daemon::testing
