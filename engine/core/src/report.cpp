// The JSON report (docs/json-report.md) and the terminal report.
#include "triage/core/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string_view>

#include "text_layout.h"
#include "triage/terminal_text.h"

namespace triage::core {

namespace {

void WriteEvidence(JsonWriter& out, const std::vector<Evidence>& evidence) {
  out.BeginArray();
  for (const auto& e : evidence) {
    out.BeginObject();
    out.Key("source").String(e.source);
    out.Key("line").Uint(e.line);
    out.Key("text").String(e.text);
    out.EndObject();
  }
  out.EndArray();
}

void WriteFacts(JsonWriter& out, const std::string& facts_json) {
  // Facts are a JSON object produced by a verifier; anything else is carried as a string so
  // the document stays valid.
  size_t b = facts_json.find_first_not_of(" \t\r\n");
  if (b != std::string::npos && facts_json[b] == '{') out.Raw(facts_json);
  else if (facts_json.empty()) out.Raw("{}");
  else out.String(facts_json);
}

void WriteKnownBug(JsonWriter& out, const KnownBugMatch& kb) {
  out.BeginObject();
  out.Key("id").String(kb.id);
  out.Key("status").String(kb.status);
  out.Key("affected").String(kb.affected);
  out.Key("package").String(kb.package);
  out.Key("version");
  if (kb.version.empty()) out.Null();
  else out.String(kb.version);
  out.Key("version_from").String(kb.version_from);
  out.Key("fixed_in").String(kb.fixed_in);
  out.Key("fixed_commit").String(kb.fixed_commit);
  out.Key("issue").String(kb.issue);
  out.Key("pr").String(kb.pr);
  out.Key("summary").String(kb.summary);
  out.Key("workaround").String(kb.workaround);
  out.EndObject();
}

}  // namespace

std::string KnownBugLine(const KnownBugMatch& kb) {
  const std::string fix = kb.fixed_in.empty() ? "fixed by " + (kb.pr.empty() ? kb.fixed_commit : kb.pr)
                                              : "fixed in " + kb.fixed_in;
  const std::string seen = kb.version.empty() ? std::string()
                           : kb.version_from == "host" ? "this host: " + kb.version
                                                        : "this log: " + kb.version;
  std::string line = kb.id + ", ";
  if (kb.status == "fixed")
    line += "should be " + fix + "; seen on " + kb.version + ": a regression or another cause";
  else if (kb.status == "possible")
    line += fix + " (possible: no " + kb.package + " version in the log)";
  else
    line += fix + " (" + seen + ")";
  return line + ": " + kb.summary;
}

void WriteRanks(JsonWriter& out, const std::vector<RankState>& ranks) {
  out.Key("ranks").BeginArray();
  for (const auto& r : ranks) {
    out.BeginObject();
    out.Key("actor").String(r.actor);
    out.Key("state").String(r.state);
    out.Key("first_failure").OptString(r.first_failure);
    out.Key("offset_seconds");
    if (r.offset_seconds) out.Double(*r.offset_seconds);
    else out.Null();
    out.Key("cause").String(r.cause);
    out.Key("detail").String(r.detail);
    // Only where the job's incident joins several hosts' logs.
    if (!r.host.empty()) out.Key("host").String(r.host);
    out.EndObject();
  }
  out.EndArray();
}

void WriteIncidentJson(JsonWriter& out, const Incident& incident) {
  out.BeginObject();
  out.Key("id");
  if (incident.id) out.Int(*incident.id);
  else out.Null();
  out.Key("service").String(incident.service);
  out.Key("host").String(incident.host);
  // Only a pod's log has it, so that other reports keep their shape.
  if (!incident.pod.empty()) {
    out.Key("pod").BeginObject();
    out.Key("namespace").String(incident.pod.pod_namespace);
    out.Key("name").String(incident.pod.pod);
    out.Key("container").String(incident.pod.container);
    out.EndObject();
  }
  out.Key("source").String(incident.source);
  out.Key("first_line").Uint(incident.first_line);
  out.Key("last_line").Uint(incident.last_line);
  out.Key("started").OptString(incident.started);
  out.Key("ended").OptString(incident.ended);
  // Only where the program's times without a zone were read in one, so that other reports keep
  // their shape.
  if (!incident.zone.empty()) {
    out.Key("times").BeginObject();
    out.Key("program_zone").String(incident.zone);
    out.Key("from").String(incident.zone_from);
    out.EndObject();
  }
  // Where the failing processes are known by their job names (a rank, a TP worker): the one that
  // failed first, also when it is the only one that failed (its peers' errors followed from it).
  if (!incident.actors.empty()) {
    out.Key("first_actor").String(incident.actors.front());
    out.Key("actors").BeginArray();
    for (const auto& a : incident.actors) out.String(a);
    out.EndArray();
    if (incident.more_actors) out.Key("more_actors").Uint(incident.more_actors);
  }
  // A job's processes one by one (docs/json-report.md, "ranks"): only a job's incident has them.
  if (!incident.ranks.empty()) WriteRanks(out, incident.ranks);
  // The job, as every host that runs it names it (docs/json-report.md, "job"): only a job's
  // process's log has one.
  if (!incident.job.empty()) out.Key("job").String(incident.job);
  out.Key("causes").BeginArray();
  for (const auto& c : incident.causes) {
    out.BeginObject();
    out.Key("cause").String(c.cause);
    out.Key("rank").Int(c.rank);
    out.Key("score").Double(c.score);
    out.Key("band").String(c.band);
    out.Key("title").String(c.title);
    out.Key("remedy").String(c.remedy);
    out.Key("captures").BeginObject();
    for (const auto& [k, v] : c.captures) out.Key(k).String(v);
    out.EndObject();
    out.Key("independent").Bool(c.independent);
    out.Key("evidence");
    WriteEvidence(out, c.evidence);
    out.Key("symptoms").BeginArray();
    for (const auto& s : c.symptoms) {
      out.BeginObject();
      out.Key("cause").String(s.cause);
      out.Key("title").String(s.title);
      out.Key("evidence");
      WriteEvidence(out, s.evidence);
      out.EndObject();
    }
    out.EndArray();
    out.Key("verifications").BeginArray();
    for (const auto& v : c.verifications) {
      out.BeginObject();
      out.Key("verifier").String(v.verifier);
      out.Key("verdict").String(VerdictName(v.verdict));
      out.Key("reason").String(v.reason);
      out.Key("facts");
      WriteFacts(out, v.facts_json);
      out.Key("host").String(v.host);
      out.Key("ms").Int(v.ms);
      out.EndObject();
    }
    out.EndArray();
    // Only a cause that fits a known bug has it, so that other reports keep their shape.
    if (!c.known_bugs.empty()) {
      out.Key("known_bugs").BeginArray();
      for (const auto& kb : c.known_bugs) WriteKnownBug(out, kb);
      out.EndArray();
    }
    out.EndObject();
  }
  out.EndArray();
  if (!incident.versions.empty()) {
    out.Key("versions").BeginArray();
    for (const auto& v : incident.versions) {
      out.BeginObject();
      out.Key("package").String(v.package);
      out.Key("version").String(v.version);
      out.Key("from").String(v.from);
      out.Key("source").String(v.source);
      if (v.line) out.Key("line").Uint(v.line);
      out.EndObject();
    }
    out.EndArray();
  }
  // Only a verified incident has it, so that a report without --verify keeps its shape.
  if (incident.verified_on) {
    const VerificationSite& site = *incident.verified_on;
    out.Key("verification").BeginObject();
    out.Key("host").String(site.host);
    out.Key("log_host");
    if (site.log_host.empty()) out.Null();
    else out.String(site.log_host);
    out.Key("other_host").Bool(site.other_host);
    out.Key("reason").String(site.reason);
    out.EndObject();
  }
  out.EndObject();
}

std::string ReportJson(const std::vector<Incident>& incidents) {
  JsonWriter out;
  out.BeginObject();
  out.Key("incidents").BeginArray();
  for (const auto& i : incidents) WriteIncidentJson(out, i);
  out.EndArray();
  out.EndObject();
  return out.Take();
}

namespace {

struct Palette {
  bool on;
  std::string operator()(const char* code, const std::string& s) const {
    if (!on) return s;
    return std::string("\x1b[") + code + "m" + s + "\x1b[0m";
  }
};

const char* BandColor(const std::string& band) {
  if (band == "likely") return "1;31";
  if (band == "possible") return "1;33";
  return "2";
}

const char* VerdictColor(Verdict v) {
  switch (v) {
    case Verdict::kConfirmed:
      return "32";
    case Verdict::kRefuted:
      return "31";
    default:
      return "2";
  }
}

std::string Score(double s) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

// Every value below comes from a log, a file name or the store: it is printed through T, which
// makes whatever a terminal would act on visible (triage/terminal_text.h).
std::string T(std::string_view text) { return TerminalText(text); }

// `text` cut to at most `max` bytes at a character boundary, "..." added when cut.
std::string Shortened(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t end = max - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// Each evidence line, or a run of them that says the same for several ranks as one:
// "file:197-204  TP0-TP7 (8 lines): Failed to get device capability ...". At the terminal's
// width a cause's own evidence is wrapped, whole (it is what proves the cause); a symptom's is
// cut (`cut`).
void EvidenceLines(std::ostringstream& out, const std::vector<Evidence>& ev, const Palette& p,
                   const std::string& indent, bool cut) {
  for (const auto& run : detail::FoldEvidence(ev)) {
    const Evidence& e = *run.first;
    if (cut) out << detail::kCutMark;
    out << indent;
    if (run.count == 1) {
      out << p("36", T(e.source) + ":" + std::to_string(e.line)) << "  " << T(Shortened(e.text, 200))
          << "\n";
      continue;
    }
    out << p("36", T(e.source) + ":" + std::to_string(e.line) + "-" + std::to_string(run.last->line))
        << "  " << T(run.who) << (run.who.empty() ? "" : " ") << "(" << run.count
        << " lines): " << T(Shortened(run.body, 200)) << "\n";
  }
}

// With several incidents, one line each before the details: which service failed, where, and
// its first cause.
void SummaryLines(std::ostringstream& out, const std::vector<Incident>& incidents, const Palette& p) {
  out << p("1", std::to_string(incidents.size()) + " incidents:") << "\n";
  for (size_t n = 0; n < incidents.size(); ++n) {
    const Incident& inc = incidents[n];
    out << detail::kCutMark << "  ";
    if (inc.id) out << "#" << *inc.id;
    else out << n + 1 << ".";
    out << " " << T(inc.service) << " on " << T(inc.host) << ", " << T(inc.source) << ":"
        << inc.first_line << "-" << inc.last_line << ": ";
    if (inc.causes.empty()) out << "no cause ranked";
    else out << T(inc.causes.front().title) << "  (" << T(inc.causes.front().cause) << ")";
    out << "\n";
  }
  out << "\n";
}

// After many incidents, how many had each first cause, most first.
constexpr size_t kManyIncidents = 10;
void ByCauseLines(std::ostringstream& out, const std::vector<Incident>& incidents, const Palette& p) {
  std::map<std::string, std::pair<size_t, std::string>> by_cause;  // cause -> (count, title)
  for (const auto& inc : incidents) {
    const std::string cause = inc.causes.empty() ? "(none)" : inc.causes.front().cause;
    auto& entry = by_cause[cause];
    ++entry.first;
    if (entry.second.empty() && !inc.causes.empty()) entry.second = inc.causes.front().title;
  }
  std::vector<std::pair<std::string, std::pair<size_t, std::string>>> rows(by_cause.begin(), by_cause.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  out << "\n" << p("1", "By cause (" + std::to_string(incidents.size()) + " incidents):") << "\n";
  for (const auto& [cause, entry] : rows) {
    std::string count = std::to_string(entry.first);
    count.insert(0, count.size() < 6 ? 6 - count.size() : 0, ' ');
    out << detail::kCutMark << count << "  " << T(cause) << "  " << T(entry.second) << "\n";
  }
}

// "rank 1 failed first; also ranks 0, 2, 3" or "TP0 failed first; also TP1, TP2": at most
// kShown of the others, then how many more.
std::string ActorsLine(const Incident& inc) {
  constexpr size_t kShown = 16;
  const std::string kRank = "rank ";
  auto is_rank = [&](const std::string& a) { return a.compare(0, kRank.size(), kRank) == 0; };
  const bool ranks = std::all_of(inc.actors.begin(), inc.actors.end(), is_rank);
  std::string line = inc.actors.front() + " failed first; also ";
  if (ranks) line += inc.actors.size() > 2 ? "ranks " : kRank;
  for (size_t k = 1; k < inc.actors.size() && k <= kShown; ++k) {
    if (k > 1) line += ", ";
    line += ranks ? inc.actors[k].substr(kRank.size()) : inc.actors[k];
  }
  const uint64_t more = inc.more_actors + (inc.actors.size() > kShown + 1 ? inc.actors.size() - kShown - 1 : 0);
  if (more) line += " and " + std::to_string(more) + " more";
  return line;
}

// Whether the ranks' timeline says more than the line that names them: a process that did not
// fail on its own (a victim, a hung or exited one), one failing later than the first, or what
// one did or missed. Ranks that all failed at once, alike (the TP workers of one service), are
// said by "TP0 failed first; also ..." alone, and their timeline would push the cause off the
// first screen.
bool TimelineTells(const Incident& inc) {
  return std::any_of(inc.ranks.begin(), inc.ranks.end(), [](const RankState& r) {
    return r.state != "failed" || !r.detail.empty() || (r.offset_seconds && *r.offset_seconds > 0);
  });
}

// The job's timeline, a line a process in the order they failed: "rank 0  +0.532 s  victim
// nccl.failure  waited in ALLREDUCE SeqNum=4"; a process without a known time shows "?".
void TimelineLines(std::ostringstream& out, const Incident& inc) {
  size_t width = 0;
  for (const auto& r : inc.ranks) width = std::max(width, r.actor.size());
  out << "  timeline:\n";
  for (const auto& r : inc.ranks) {
    std::string at = "?";
    if (r.offset_seconds) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "+%.3f s", *r.offset_seconds);
      at = buf;
    }
    out << "    " << T(r.actor) << std::string(width - r.actor.size(), ' ') << "  " << at
        << std::string(at.size() < 12 ? 12 - at.size() : 0, ' ') << "  " << T(r.state);
    if (!r.cause.empty()) out << "  " << T(r.cause);
    if (!r.detail.empty()) out << "  " << T(r.detail);
    out << "\n";
  }
}

// "times: program clock read as UTC+08:00, from the wrapper's clock".
std::string ZoneLine(const Incident& inc) {
  std::string line = "times: program clock read as UTC";
  if (inc.zone != "+00:00") line += T(inc.zone);
  if (inc.zone_from == "setting") line += ", from the timezone setting";
  else if (inc.zone_from == "wrapper") line += ", from the wrapper's clock";
  else line += ", the wrapper's clock showing no zone";
  return line;
}

}  // namespace

std::string ReportText(const std::vector<Incident>& incidents, bool color) {
  return ReportText(incidents, TextOptions{color, 0});
}

std::string ReportText(const std::vector<Incident>& incidents, const TextOptions& options) {
  std::ostringstream out;
  Palette p{options.color};
  if (incidents.empty()) {
    out << "No incident: no failure found.\n";
    return out.str();
  }
  if (incidents.size() > 1) SummaryLines(out, incidents, p);
  for (size_t n = 0; n < incidents.size(); ++n) {
    const Incident& inc = incidents[n];
    if (n) out << "\n";
    std::string head = "Incident";
    if (inc.id) head += " #" + std::to_string(*inc.id);
    head += ": " + T(inc.service) + " on " + T(inc.host);
    if (!inc.pod.empty()) head += " in pod " + T(inc.pod.pod_namespace) + "/" + T(inc.pod.pod);
    out << p("1", head) << "\n";
    out << "  " << T(inc.source) << ":" << inc.first_line << "-" << inc.last_line;
    if (inc.started || inc.ended) {
      out << "  (" << (inc.started ? T(*inc.started) : "?") << " .. " << (inc.ended ? T(*inc.ended) : "?")
          << ")";
    }
    out << "\n";
    if (!inc.zone.empty()) out << "  " << p("2", ZoneLine(inc)) << "\n";
    if (inc.actors.size() > 1) out << "  " << ActorsLine(inc) << "\n";
    if (inc.ranks.size() > 1 && TimelineTells(inc)) TimelineLines(out, inc);
    if (inc.verified_on && inc.verified_on->other_host) {
      // Said before any verdict, so that nobody reads a check of this machine as one of the
      // log's.
      out << "  " << p("1;33", "checked on " + T(inc.verified_on->host) + ", not the log's host:")
          << " " << T(inc.verified_on->reason) << "; its checks are not applicable here\n";
    } else if (inc.verified_on) {
      out << "  " << p("2", "checked on " + T(inc.verified_on->host) + ": " + T(inc.verified_on->reason))
          << "\n";
    }
    for (const auto& c : inc.causes) {
      out << "\n  " << c.rank << ". " << p("1", T(c.title)) << "\n";
      out << "     " << p(BandColor(c.band), T(c.band) + " " + Score(c.score)) << "  " << T(c.cause);
      if (!c.independent) out << "  (shares evidence with another cause)";
      else if (inc.causes.size() > 1) out << "  (independent)";
      out << "\n";
      EvidenceLines(out, c.evidence, p, "     ", /*cut=*/false);
      if (!c.remedy.empty()) out << "     " << p("32", "fix:") << " " << T(c.remedy) << "\n";
      for (const auto& kb : c.known_bugs)
        out << "     " << p("1;35", "known bug:") << " " << T(KnownBugLine(kb)) << "\n"
            << "       " << T(kb.issue) << "\n";
      for (const auto& s : c.symptoms) {
        out << "     " << p("2", "symptom:") << " " << T(s.title) << "  (" << T(s.cause) << ")\n";
        EvidenceLines(out, s.evidence, p, "       ", /*cut=*/true);
      }
      for (const auto& v : c.verifications) {
        out << "     " << p("1", "check") << " " << T(v.verifier) << ": "
            << p(VerdictColor(v.verdict), VerdictName(v.verdict));
        if (!v.reason.empty()) out << " (" << T(v.reason) << ")";
        out << "\n";
      }
    }
  }
  if (incidents.size() >= kManyIncidents) ByCauseLines(out, incidents, p);
  return detail::FitToWidth(out.str(), options.width);
}

}  // namespace triage::core
