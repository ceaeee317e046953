// What `triage watch` tells systemd, without libsystemd: its readiness and its stop through
// sd_notify's datagram (NOTIFY_SOCKET, the unit's Type=notify), and its own log's priorities as
// "<N>" prefixes that journald reads from a stream it is given (JOURNAL_STREAM).
#pragma once

#include <string>
#include <string_view>

#include "triage/daemon/daemon.h"

namespace triage::cli {

// Sends `state` ("READY=1", "STOPPING=1", "RELOADING=1") to the socket NOTIFY_SOCKET names (a
// path, or "@name" in the abstract namespace); nothing when it is unset. False when it is set and
// the datagram could not be sent.
bool NotifyServiceManager(std::string_view state);

// Whether standard error is the journal's stream: JOURNAL_STREAM ("DEV:INODE") names the
// device and inode of the descriptor systemd connected, and stderr is still that one (a
// redirection in between is not the journal).
bool StderrIsJournal();

// The "<N>" prefix of a record at `level`: syslog's priorities (sd-daemon(3)): error 3,
// warning 4, info 6, debug 7.
std::string JournalPriorityPrefix(daemon::LogRecord::Level level);

}  // namespace triage::cli
