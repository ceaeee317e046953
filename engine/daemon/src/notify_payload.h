// The documents `[notify]` sends (docs/notifications.md is the contract): triage's own JSON (the
// program's always, the webhook's by default), and the shapes receivers take as they are:
// Slack's incoming webhook, PagerDuty's Events API v2 and Alertmanager's v2 API. Each carries
// the severity of the incident's cause family (alert_severity.h) and a de-duplication key (the
// incident's id), and each has a resolution of its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "triage/core/incident.h"

namespace triage::daemon::detail {

enum class NotifyFormat { kJson, kSlack, kPagerDuty, kAlertmanager };
enum class NotifyEvent { kNew, kRecurrence, kResolved };

// "json", "slack", "pagerduty", "alertmanager"; kJson for anything else (the configuration
// refuses other names before this is asked).
NotifyFormat ParseNotifyFormat(const std::string& name);

struct PayloadSettings {
  NotifyFormat format = NotifyFormat::kJson;
  std::string routing_key;  // PagerDuty's
  std::string link;         // the incident's id appended makes its link; empty: none
};

// The key a receiver folds an incident's notifications under: "triage-<id>" ("triage-<host>-
// <fingerprint>" for an incident not stored, which the daemon never sends).
std::string DedupKey(const core::Incident& incident);

// Critical: the incident has a root cause whose family's severity is critical (a hardware
// fault). Such a notification is never held back or dropped for a limit.
bool IsCritical(const core::Incident& incident);

// The root cause an alert is about (the first of the most severe family); "unclassified" for an
// incident without causes.
std::string AlertCauseOf(const core::Incident& incident);

// triage's own document: {"text", "event", "severity", "family", "dedup_key", "host",
// "incident"}.
std::string NotificationJson(const core::Incident& incident, NotifyEvent event,
                             const std::string& host);

// The webhook's body in `settings.format`.
std::string WebhookDocument(const PayloadSettings& settings, const core::Incident& incident,
                            NotifyEvent event, const std::string& host);

// What the rate limit held back (never a critical one), by cause.
struct HeldBack {
  uint64_t total = 0;
  std::map<std::string, uint64_t> by_cause;
};

// "6 incidents held back in the last minute: 4 cuda.oom, 2 native.crash": the summary line.
std::string HeldBackText(const HeldBack& held, const std::string& host);
// The summary as triage's own JSON ({"text", "event": "held_back", "host", "held": {"total",
// "causes": {id: count}}}), or as the webhook's format; empty when the format has no place for
// it (PagerDuty and Alertmanager: an alert for notifications held back would page for nothing
// that needs a hand; the log and the metrics count them).
std::string HeldBackJson(const HeldBack& held, const std::string& host);
std::string HeldBackDocument(const PayloadSettings& settings, const HeldBack& held,
                             const std::string& host);

}  // namespace triage::daemon::detail
