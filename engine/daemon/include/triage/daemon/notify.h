// What `[notify]` sends outside the daemon's own loop (docs/notifications.md).
#pragma once

#include "triage/core/config.h"
#include "triage/core/incident.h"
#include "triage/status.h"

namespace triage::daemon {

// Sends the resolution of a stored incident (`incident.id` set) through the channels of
// `config`'s [notify] now, on the calling thread: the program gets triage's JSON with event
// "resolved", the webhook its format's resolution (PagerDuty's "resolve" of the incident's
// dedup_key, Alertmanager's alert with `endsAt` now). Ok when [notify] sets no channel; otherwise
// the first channel's failure, the others tried all the same. `triage resolve` calls it.
Status NotifyResolved(const core::Config& config, const core::Incident& incident);

}  // namespace triage::daemon
