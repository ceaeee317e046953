// Calendar dates and UTC times as seconds since the epoch, for every part of triage that reads
// or writes them: the log clock (ingest's log_time.h, which reads the logs' many forms on top of
// these), the store's and the daemon's own times, a check's reading of a log's time.
//
// Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace triage {

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d);

// "2026-11-02T09:00:00" or "2026-11-02 09:00:00" (UTC; what follows the seconds is not read) to
// seconds since the epoch; -1 when unparsable.
int64_t ParseUtc(const std::string& iso);

}  // namespace triage
