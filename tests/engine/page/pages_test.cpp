// The pages: an incident's document, a job's timeline, the site over a store.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <regex>

#include "triage/page/page.h"

namespace triage::page {
namespace {

constexpr const char* kHostile =
    "torch.OutOfMemoryError: CUDA out of memory <script>alert(1)</script> & \"q\"";

core::Incident Incident(const std::string& service, const std::string& host,
                        const std::string& cause, const std::string& line) {
  core::Incident inc;
  inc.service = service;
  inc.host = host;
  inc.source = service + ".log";
  inc.first_line = 3;
  inc.last_line = 9;
  inc.started = "2026-12-01T10:00:05";
  inc.ended = inc.started;
  core::Cause c;
  c.cause = cause;
  c.rank = 1;
  c.score = 0.9;
  c.band = "likely";
  c.title = "Title of " + cause;
  c.remedy = "First step\nSecond <step>";
  c.evidence = {{inc.source, 5, line}};
  inc.causes.push_back(c);
  return inc;
}

core::RankState Rank(const std::string& actor, const std::string& state,
                     std::optional<double> offset) {
  core::RankState r;
  r.actor = actor;
  r.state = state;
  r.offset_seconds = offset;
  r.cause = state == "failed" ? "cuda.oom" : "nccl.failure.timeout";
  return r;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(IncidentDocument, HoldsCausesEvidenceRemedyVerdictsAndKnownBugWithLogTextEscaped) {
  store::StoredIncident s;
  s.summary.id = 7;
  s.summary.occurrences = 2;
  s.incident = Incident("svc", "node-1", "cuda.oom", kHostile);
  core::Verification v;
  v.verifier = "gpu.memory";
  v.verdict = core::Verdict::kConfirmed;
  v.reason = "<b>free</b> 1 GiB";
  v.host = "node-1";
  s.incident.causes[0].verifications.push_back(v);
  core::KnownBugMatch bug;
  bug.id = "vllm#8735";
  bug.status = "affected";
  bug.issue = "https://github.com/vllm-project/vllm/issues/8735";
  bug.pr = "javascript:alert(1)";
  s.incident.causes[0].known_bugs.push_back(bug);
  const std::string html = IncidentDocument(s);
  EXPECT_EQ(Count(html, "<script"), 0u) << html;
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;"),
            std::string::npos);
  EXPECT_NE(html.find("Title of cuda.oom"), std::string::npos);
  EXPECT_NE(html.find("First step<br>Second &lt;step&gt;"), std::string::npos);
  EXPECT_NE(html.find("class=\"verdict-confirmed\">confirmed"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;free&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"https://github.com/vllm-project/vllm/issues/8735\""),
            std::string::npos);
  EXPECT_EQ(html.find("href=\"javascript:"), std::string::npos);  // not a link, only text
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  // Self-contained: nothing is loaded from elsewhere.
  EXPECT_FALSE(std::regex_search(
      html, std::regex("(src|href)=\"(https?:)?//[^\"]*\\.(css|js|png|svg|woff)")));
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(TimelineSvg, OneLanePerRankPlacedByItsOffsetWithTheActorEscaped) {
  core::Incident inc = Incident("train", "node-2", "cuda.oom", "oom");
  EXPECT_EQ(TimelineSvg(inc), "");  // not a job's
  inc.ranks = {Rank("rank 1", "failed", 0), Rank("rank 0", "victim", 1),
               Rank("<rank 3>", "victim", 2)};
  const std::string svg = TimelineSvg(inc);
  EXPECT_EQ(Count(svg, "<g class=\"lane\""), 3u);
  EXPECT_NE(svg.find("&lt;rank 3&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<rank 3>"), std::string::npos);
  // The marks move right with the offsets (first at the plot's start, last at its end).
  std::smatch m;
  std::vector<double> xs;
  std::string rest = svg;
  while (std::regex_search(rest, m, std::regex("<circle cx=\"([0-9.]+)\""))) {
    xs.push_back(std::stod(m[1]));
    rest = m.suffix();
  }
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_LT(xs[0], xs[1]);
  EXPECT_LT(xs[1], xs[2]);
}

TEST(TimelineSvg, AJobWithoutTimesIsDrawnInOrderAndSaysSo) {
  core::Incident inc = Incident("train", "node-2", "cuda.oom", "oom");
  inc.ranks = {Rank("rank 1", "failed", std::nullopt), Rank("rank 0", "victim", std::nullopt)};
  const std::string svg = TimelineSvg(inc);
  EXPECT_NE(svg.find("the log has no times"), std::string::npos);
  EXPECT_EQ(Count(svg, "<g class=\"lane\""), 2u);
}

class SiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "triage-page-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = store::Store::Open(dir_ + "/t.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_.emplace(std::move(*s));
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Add(core::Incident inc, std::vector<core::PackageVersion> versions = {}) {
    inc.versions = std::move(versions);
    std::vector<core::Incident> batch{std::move(inc)};
    auto r = store_->Record(batch);
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  static core::PackageVersion Driver(const std::string& v) {
    return {"driver", v, "log", "x.log", 1};
  }

  std::string dir_;
  std::optional<store::Store> store_;
};

TEST_F(SiteTest, TheListFiltersByCauseHostAndServiceAndEscapesWhatItShows) {
  Add(Incident("api", "node-1", "cuda.oom", kHostile));
  Add(Incident("api", "node-2", "nccl.failure.timeout", "timeout"));
  Add(Incident("<svc>", "node-2", "cuda.oom", "oom"));
  Site site(*store_);
  auto rows = [&](const std::string& target) {
    return Count(site.Get(target).body, "<tr class=\"incident\">");
  };
  EXPECT_EQ(rows("/"), 3u);
  EXPECT_EQ(rows("/?cause=cuda"), 2u);
  EXPECT_EQ(rows("/?cause=nccl"), 1u);
  EXPECT_EQ(rows("/?host=node-2"), 2u);
  EXPECT_EQ(rows("/?service=api&host=node-1"), 1u);
  EXPECT_EQ(rows("/?since=2026-12-02"), 0u);
  const Page list = site.Get("/");
  EXPECT_EQ(list.status, 200);
  EXPECT_NE(list.body.find("&lt;svc&gt;"), std::string::npos);
  EXPECT_EQ(Count(list.body, "<g class=\"bar\""), 1u);  // one day of occurrences
  EXPECT_EQ(site.Get("/?since=soon").status, 400);
}

TEST_F(SiteTest, CountsOverTimeAreBarsPerDayOrPerHour) {
  Add(Incident("api", "node-1", "cuda.oom", "oom"));
  core::Incident later = Incident("web", "node-1", "cuda.oom", "oom");
  later.started = later.ended = "2026-12-01T13:20:00";
  Add(later);
  core::Incident next_day = Incident("db", "node-1", "nccl.failure.timeout", "t");
  next_day.started = next_day.ended = "2026-12-02T01:00:00";
  Add(next_day);
  Site site(*store_);
  const std::string days = site.Get("/").body;
  EXPECT_EQ(Count(days, "<g class=\"bar\""), 2u);
  EXPECT_NE(days.find("data-at=\"2026-12-01\""), std::string::npos);
  const std::string hours = site.Get("/?by=hour").body;
  EXPECT_EQ(Count(hours, "<g class=\"bar\""), 3u);
  EXPECT_NE(hours.find("data-at=\"2026-12-01T13\""), std::string::npos);
  EXPECT_NE(hours.find("12-01 13h"), std::string::npos);
  // A cause filter narrows the bars too.
  EXPECT_EQ(Count(site.Get("/?cause=nccl&by=hour").body, "<g class=\"bar\""), 1u);
}

TEST_F(SiteTest, IncidentAndJobPagesAndUnknownPaths) {
  core::Incident job = Incident("train", "node-1", "cuda.oom", kHostile);
  job.ranks = {Rank("rank 1", "failed", 0), Rank("rank 0", "victim", 0.5),
               Rank("rank 2", "victim", 1)};
  Add(job);
  Site site(*store_);
  const Page incident = site.Get("/incident/1");
  EXPECT_EQ(incident.status, 200);
  EXPECT_EQ(Count(incident.body, "<script"), 0u);
  EXPECT_NE(incident.body.find("href=\"/job/1\""), std::string::npos);
  const Page page = site.Get("/job/1");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(Count(page.body, "<g class=\"lane\""), 3u);
  EXPECT_EQ(site.Get("/incident/99").status, 404);
  EXPECT_EQ(site.Get("/incident/x").status, 404);
  EXPECT_EQ(site.Get("/etc/passwd").status, 404);
}

TEST_F(SiteTest, HostsByCauseTellsANodeFromADriverVersion) {
  // cuda.oom only on node-3; nccl timeouts on the two hosts with driver 550.54 and not on the
  // one with 560.35.
  Add(Incident("a", "node-3", "cuda.oom", "oom"), {Driver("560.35")});
  Add(Incident("b", "node-1", "nccl.failure.timeout", "t"), {Driver("550.54")});
  Add(Incident("c", "node-2", "nccl.failure.timeout", "t"), {Driver("550.54")});
  Site site(*store_);
  const Page hosts = site.Get("/hosts");
  EXPECT_EQ(hosts.status, 200);
  EXPECT_EQ(Count(hosts.body, "<tr class=\"host\">"), 3u);
  EXPECT_NE(hosts.body.find("follows a node: only on node-3 of 3 hosts"), std::string::npos)
      << hosts.body;
  EXPECT_NE(hosts.body.find("follows driver 550.54: on the 2 hosts with it, on none of the others"),
            std::string::npos)
      << hosts.body;
}

}  // namespace
}  // namespace triage::page
