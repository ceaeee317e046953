#include "notify_payload.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "triage/core/report.h"
#include "triage/daemon/alert_severity.h"
#include "triage/json.h"

namespace triage::daemon::detail {

namespace {

constexpr size_t kTextPart = 200;    // bytes of each log-borne part of the summary line
constexpr size_t kRemedyPart = 600;  // bytes of the remedy an alert carries
// How long an Alertmanager alert stays firing unless resolved first (Alertmanager ends an
// alert without `endsAt` after its resolve_timeout, five minutes by default, and triage sends
// each occurrence once).
constexpr auto kAlertLifetime = std::chrono::hours(24);

// A part of a line a chat shows: one line, no control characters, bounded, and nothing a chat
// reads as markup (the text comes from a log): Slack's commands and mentions ("<!channel>",
// "<@U123>", "<url|label>") lose their angle brackets to look-alikes, "@here", "@channel" and
// "@everyone" their at sign, a Markdown link its "](", and the bidirectional controls (U+202A to
// U+202E, U+2066 to U+2069, U+200E, U+200F, U+061C) that reorder what a reader sees are dropped.
std::string Part(std::string_view s, size_t limit = kTextPart) {
  const std::string clean = SanitizeUtf8(s.substr(0, std::min(s.size(), limit)));
  std::string out;
  for (size_t i = 0; i < clean.size(); ++i) {
    const auto c = static_cast<unsigned char>(clean[i]);
    const std::string_view rest = std::string_view(clean).substr(i);
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (c == '<') {
      out += "\u2039";
    } else if (c == '>') {
      out += "\u203a";
    } else if (c == '@' && (rest.substr(1, 4) == "here" || rest.substr(1, 7) == "channel" ||
                            rest.substr(1, 8) == "everyone")) {
      out += "\uff20";
    } else if (c == ']' && rest.substr(1, 1) == "(") {
      out += "] ";
    } else if (c == 0xe2 && i + 2 < clean.size() &&
               ((clean[i + 1] == '\x80' && ((clean[i + 2] >= '\xaa' && clean[i + 2] <= '\xae') ||
                                            clean[i + 2] == '\x8e' || clean[i + 2] == '\x8f')) ||
                (clean[i + 1] == '\x81' && clean[i + 2] >= '\xa6' && clean[i + 2] <= '\xa9'))) {
      i += 2;
    } else if (c == 0xd8 && i + 1 < clean.size() && clean[i + 1] == '\x9c') {
      i += 1;
    } else {
      out += clean[i];
    }
  }
  return out;
}

// Slack's mrkdwn takes "&", "<" and ">" as markup; Part() has already turned the brackets into
// look-alikes, the ampersand is written as its entity.
std::string SlackEscaped(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '&' ? std::string("&amp;") : std::string(1, c);
  return out;
}

// The root cause an alert is about: the first of the most severe class.
const core::Cause* AlertCause(const core::Incident& inc) {
  auto rank = [](std::string_view severity) {
    return severity == "critical" ? 3 : severity == "error" ? 2 : 1;
  };
  const core::Cause* best = nullptr;
  for (const auto& c : inc.causes) {
    if (!best || rank(ClassifyCause(c.cause).severity) > rank(ClassifyCause(best->cause).severity))
      best = &c;
  }
  return best;
}

// What every shape says, drawn once from the incident.
struct AlertFacts {
  std::string id;  // the incident's id, "" when not stored
  std::string cause = "unclassified";
  std::string title;
  std::string remedy;
  AlertClass cls = ClassifyCause("unclassified");
  std::string host;
  std::string service;
  std::string job;  // the job's name when the incident is a job's (its ranks are known)
  std::string link;
  std::string text;  // the summary line
};

const char* EventName(NotifyEvent event) {
  switch (event) {
    case NotifyEvent::kNew: return "new";
    case NotifyEvent::kRecurrence: return "recurrence";
    case NotifyEvent::kResolved: return "resolved";
  }
  return "new";
}

AlertFacts Facts(const core::Incident& inc, NotifyEvent event, const std::string& host,
                 const std::string& link) {
  AlertFacts f;
  if (inc.id) f.id = std::to_string(*inc.id);
  if (const core::Cause* top = AlertCause(inc)) {
    f.cause = top->cause;
    f.title = Part(top->title.empty() ? top->cause : top->title);
    f.remedy = Part(top->remedy, kRemedyPart);
    f.cls = ClassifyCause(top->cause);
  }
  f.host = Part(inc.host.empty() ? host : inc.host);
  f.service = Part(inc.service);
  if (!inc.ranks.empty()) f.job = f.service;
  if (!link.empty() && !f.id.empty()) f.link = link + f.id;
  f.text = event == NotifyEvent::kNew          ? "triage: new incident"
           : event == NotifyEvent::kRecurrence ? "triage: incident recurred"
                                               : "triage: incident resolved";
  if (!f.id.empty()) f.text += " #" + f.id;
  f.text += " on " + f.host + ": " + f.service;
  if (!inc.causes.empty()) f.text += ": " + f.title + " (" + Part(f.cause) + ")";
  return f;
}

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string SlackDocument(const AlertFacts& f, NotifyEvent event) {
  std::string text = "*[";
  text += event == NotifyEvent::kResolved ? std::string_view("resolved") : f.cls.severity;
  text += "]* ";
  text += SlackEscaped(f.text);
  if (event != NotifyEvent::kResolved && !f.remedy.empty()) {
    text += "\n>";
    text += SlackEscaped(f.remedy);
  }
  if (!f.link.empty()) {
    text += '\n';
    text += SlackEscaped(f.link);
  }
  JsonWriter w;
  w.BeginObject().Key("text").String(text).EndObject();
  return w.Take();
}

std::string PagerDutyDocument(const AlertFacts& f, NotifyEvent event, const std::string& dedup,
                              const std::string& routing_key) {
  JsonWriter w;
  w.BeginObject();
  w.Key("routing_key").String(routing_key);
  w.Key("event_action").String(event == NotifyEvent::kResolved ? "resolve" : "trigger");
  w.Key("dedup_key").String(dedup);
  if (event != NotifyEvent::kResolved) {
    w.Key("payload").BeginObject();
    w.Key("summary").String(f.text.substr(0, 1024));
    w.Key("source").String(f.host);
    w.Key("severity").String(f.cls.severity);
    w.Key("component").String(f.service);
    w.Key("group").String(f.cls.family);
    w.Key("class").String(f.cause);
    w.Key("custom_details").BeginObject();
    w.Key("incident").String(f.id);
    w.Key("event").String(EventName(event));
    w.Key("title").String(f.title);
    w.Key("remedy").String(f.remedy);
    if (!f.job.empty()) w.Key("job").String(f.job);
    w.EndObject();
    w.EndObject();
    if (!f.link.empty()) {
      w.Key("links").BeginArray().BeginObject();
      w.Key("href").String(f.link).Key("text").String("triage incident #" + f.id);
      w.EndObject().EndArray();
    }
  }
  w.EndObject();
  return w.Take();
}

// One alert in a list, as Alertmanager's `POST /api/v2/alerts` takes it. Its labels are its
// identity: the same incident's resolution ends the same alert.
std::string AlertmanagerDocument(const AlertFacts& f, NotifyEvent event) {
  const auto now = std::chrono::system_clock::now();
  JsonWriter w;
  w.BeginArray().BeginObject();
  w.Key("labels").BeginObject();
  w.Key("alertname").String("TriageIncident");
  w.Key("incident").String(f.id);
  w.Key("cause").String(f.cause);
  w.Key("family").String(f.cls.family);
  w.Key("severity").String(f.cls.severity);
  w.Key("host").String(f.host);
  w.Key("service").String(f.service);
  if (!f.job.empty()) w.Key("job").String(f.job);
  w.EndObject();
  w.Key("annotations").BeginObject();
  w.Key("title").String(f.title);
  w.Key("summary").String(f.text);
  if (!f.remedy.empty()) w.Key("remedy").String(f.remedy);
  if (!f.link.empty()) w.Key("link").String(f.link);
  w.EndObject();
  w.Key("startsAt").String(Rfc3339(now));
  w.Key("endsAt").String(Rfc3339(event == NotifyEvent::kResolved ? now : now + kAlertLifetime));
  if (!f.link.empty()) w.Key("generatorURL").String(f.link);
  w.EndObject().EndArray();
  return w.Take();
}

}  // namespace

NotifyFormat ParseNotifyFormat(const std::string& name) {
  if (name == "slack") return NotifyFormat::kSlack;
  if (name == "pagerduty") return NotifyFormat::kPagerDuty;
  if (name == "alertmanager") return NotifyFormat::kAlertmanager;
  return NotifyFormat::kJson;
}

std::string AlertCauseOf(const core::Incident& incident) {
  const core::Cause* c = AlertCause(incident);
  return c ? c->cause : "unclassified";
}

std::string DedupKey(const core::Incident& incident) {
  if (incident.id) return "triage-" + std::to_string(*incident.id);
  return "triage-" + incident.host + "-" + incident.fingerprint;
}

bool IsCritical(const core::Incident& incident) {
  return std::any_of(incident.causes.begin(), incident.causes.end(), [](const core::Cause& c) {
    return ClassifyCause(c.cause).severity == "critical";
  });
}

std::string NotificationJson(const core::Incident& incident, NotifyEvent event,
                             const std::string& host) {
  const AlertFacts f = Facts(incident, event, host, "");
  JsonWriter w;
  w.BeginObject();
  w.Key("text").String(f.text);
  w.Key("event").String(EventName(event));
  w.Key("severity").String(f.cls.severity);
  w.Key("family").String(f.cls.family);
  w.Key("dedup_key").String(DedupKey(incident));
  w.Key("host").String(host);
  w.Key("incident");
  core::WriteIncidentJson(w, incident);
  w.EndObject();
  return w.Take();
}

std::string WebhookDocument(const PayloadSettings& settings, const core::Incident& incident,
                            NotifyEvent event, const std::string& host) {
  switch (settings.format) {
    case NotifyFormat::kJson: return NotificationJson(incident, event, host);
    case NotifyFormat::kSlack: return SlackDocument(Facts(incident, event, host, settings.link), event);
    case NotifyFormat::kPagerDuty:
      return PagerDutyDocument(Facts(incident, event, host, settings.link), event, DedupKey(incident),
                               settings.routing_key);
    case NotifyFormat::kAlertmanager:
      return AlertmanagerDocument(Facts(incident, event, host, settings.link), event);
  }
  return NotificationJson(incident, event, host);
}

std::string HeldBackText(const HeldBack& held, const std::string& host) {
  std::vector<std::pair<std::string, uint64_t>> causes(held.by_cause.begin(), held.by_cause.end());
  std::stable_sort(causes.begin(), causes.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text = "triage on " + Part(host) + ": " + std::to_string(held.total) +
                     (held.total == 1 ? " incident" : " incidents") +
                     " held back in the last minute";
  for (size_t i = 0; i < causes.size(); ++i)
    text += (i ? ", " : ": ") + std::to_string(causes[i].second) + " " + Part(causes[i].first);
  return text;
}

std::string HeldBackJson(const HeldBack& held, const std::string& host) {
  JsonWriter w;
  w.BeginObject();
  w.Key("text").String(HeldBackText(held, host));
  w.Key("event").String("held_back");
  w.Key("host").String(host);
  w.Key("held").BeginObject();
  w.Key("total").Uint(held.total);
  w.Key("causes").BeginObject();
  for (const auto& [cause, n] : held.by_cause) w.Key(cause).Uint(n);
  w.EndObject().EndObject().EndObject();
  return w.Take();
}

std::string HeldBackDocument(const PayloadSettings& settings, const HeldBack& held,
                             const std::string& host) {
  switch (settings.format) {
    case NotifyFormat::kJson: return HeldBackJson(held, host);
    case NotifyFormat::kSlack: {
      JsonWriter w;
      w.BeginObject().Key("text").String(SlackEscaped(HeldBackText(held, host))).EndObject();
      return w.Take();
    }
    case NotifyFormat::kPagerDuty:
    case NotifyFormat::kAlertmanager: return "";
  }
  return "";
}

}  // namespace triage::daemon::detail
