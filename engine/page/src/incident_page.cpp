// One incident as a page: what `show` prints, as HTML.
#include <cstdio>

#include "html.h"
#include "triage/page/page.h"

namespace triage::page {
namespace {

using detail::CauseColour;
using detail::LinkOrText;

std::string Row(std::string_view name, std::string_view value) {
  return "<tr><td>" + HtmlText(name) + "</td><td>" + HtmlText(value) + "</td></tr>";
}

// Lines of a text that may hold several (a remedy), each escaped, joined by <br>.
std::string Lines(std::string_view text) {
  std::string out;
  size_t start = 0;
  for (;;) {
    const size_t nl = text.find('\n', start);
    out += HtmlText(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    out += "<br>";
    start = nl + 1;
  }
  return out;
}

std::string EvidenceLines(const std::vector<core::Evidence>& evidence) {
  if (evidence.empty()) return "";
  std::string out = "<div class=\"evidence\">";
  for (const auto& e : evidence) {
    out += "<div class=\"ev\"><span class=\"loc\">" + HtmlText(e.source) + ":" +
           std::to_string(e.line) + "</span>" + HtmlText(e.text) + "</div>";
  }
  return out + "</div>";
}

std::string Verifications(const std::vector<core::Verification>& verifications) {
  if (verifications.empty()) return "";
  std::string out =
      "<h3>Verdicts</h3><table class=\"verdicts\"><tr><th>check</th><th>verdict</th>"
      "<th>host</th><th>why</th></tr>";
  for (const auto& v : verifications) {
    const std::string verdict = core::VerdictName(v.verdict);
    out += "<tr><td>" + HtmlText(v.verifier) + "</td><td class=\"verdict-" + verdict + "\">" +
           verdict + "</td><td>" + HtmlText(v.host) + "</td><td>" + HtmlText(v.reason) +
           "</td></tr>";
  }
  return out + "</table>";
}

std::string KnownBugs(const std::vector<core::KnownBugMatch>& bugs) {
  std::string out;
  for (const auto& b : bugs) {
    out += "<div class=\"bug\"><b>Known bug " + LinkOrText(b.issue, b.id) + "</b> (" +
           HtmlText(b.status) + ")";
    if (!b.summary.empty()) out += ": " + HtmlText(b.summary);
    out += "<br>" + HtmlText(b.package);
    if (!b.version.empty())
      out.append(" ")
          .append(HtmlText(b.version))
          .append(" (from the ")
          .append(HtmlText(b.version_from))
          .append(")");
    if (!b.affected.empty()) out += "; affected " + HtmlText(b.affected);
    if (!b.fixed_in.empty())
      out += "; fixed in " + HtmlText(b.fixed_in);
    else if (!b.fixed_commit.empty())
      out += "; fixed by " + HtmlText(b.fixed_commit);
    if (!b.pr.empty()) out += " (" + LinkOrText(b.pr, "the fix") + ")";
    if (!b.workaround.empty()) out += "<br>Workaround: " + Lines(b.workaround);
    out += "</div>";
  }
  return out;
}

std::string CauseSection(const core::Cause& c) {
  char score[16];
  std::snprintf(score, sizeof score, "%.2f", c.score);
  std::string out = "<section class=\"cause\" style=\"--c:" + std::string(CauseColour(c.cause)) +
                    "\"><h2>" + std::to_string(c.rank) + ". " + HtmlText(c.title) + "</h2>";
  out += "<div><code>" + HtmlText(c.cause) + "</code> <span class=\"band\">" + HtmlText(c.band) +
         " " + score + "</span></div>";
  if (!c.remedy.empty())
    out += "<div class=\"remedy\"><b>Remedy.</b> " + Lines(c.remedy) + "</div>";
  out += KnownBugs(c.known_bugs);
  out += "<h3>Evidence</h3>" + EvidenceLines(c.evidence);
  for (const auto& s : c.symptoms) {
    out += "<details class=\"symptom\"><summary>Symptom: " + HtmlText(s.title) + " <code>" +
           HtmlText(s.cause) + "</code> (" + std::to_string(s.evidence.size()) +
           " lines)</summary>" + EvidenceLines(s.evidence) + "</details>";
  }
  out += Verifications(c.verifications);
  return out + "</section>";
}

std::string Facts(const store::StoredIncident& stored) {
  const auto& s = stored.summary;
  const auto& inc = stored.incident;
  std::string out = "<table class=\"meta\">";
  out += Row("service", inc.service);
  std::string hosts;
  for (const auto& h : stored.hosts)
    hosts += (hosts.empty() ? "" : ", ") + h.host + " (" + std::to_string(h.occurrences) + ")";
  out += Row(stored.hosts.size() > 1 ? "hosts" : "host", hosts.empty() ? inc.host : hosts);
  if (!inc.pod.empty())
    out += Row("pod", inc.pod.pod_namespace + "/" + inc.pod.pod + " " + inc.pod.container);
  out += Row("source", inc.source + ":" + std::to_string(inc.first_line) + "-" +
                           std::to_string(inc.last_line));
  if (inc.started) out += Row("started", *inc.started);
  if (inc.ended) out += Row("ended", *inc.ended);
  out += Row("seen", std::to_string(s.occurrences) + (s.occurrences == 1 ? " time" : " times") +
                         ", first " + s.first_seen + ", last " + s.last_seen);
  out += Row("status", s.status + (s.note.empty() ? "" : ": " + s.note));
  std::string versions;
  for (const auto& v : inc.versions)
    versions += (versions.empty() ? "" : ", ") + v.package + " " + v.version + " (" + v.from + ")";
  if (!versions.empty()) out += Row("versions", versions);
  out += Row("fingerprint", s.fingerprint);
  return out + "</table>";
}

}  // namespace

std::string IncidentDocument(const store::StoredIncident& stored, bool links) {
  const auto& inc = stored.incident;
  const int64_t id = stored.summary.id;
  const std::string title = inc.causes.empty() ? stored.summary.title : inc.causes.front().title;
  std::string body = links ? detail::Navigation() : "";
  body += "<main><h1>Incident " + std::to_string(id) + ": " + HtmlText(title) + "</h1>";
  body += Facts(stored);
  if (!inc.ranks.empty()) {
    body += "<h2>The job's ranks</h2>";
    if (links) body += "<p><a href=\"/job/" + std::to_string(id) + "\">The job's page</a></p>";
    body += TimelineSvg(inc);
  }
  for (const auto& c : inc.causes) body += CauseSection(c);
  if (!stored.activity.empty()) {
    body += "<h2>Activity</h2><table>";
    for (const auto& a : stored.activity)
      body += "<tr><td>" + HtmlText(a.time) + "</td><td>" + HtmlText(a.action) + "</td><td>" +
              HtmlText(a.note) + "</td></tr>";
    body += "</table>";
  }
  body += "</main>";
  return detail::Document("Incident " + std::to_string(id) + ": " + title, body);
}

}  // namespace triage::page
