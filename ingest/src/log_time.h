// A line's time as the rest of triage keeps it (DESIGN.md section 5b): the decoder writes the
// time as far as the line tells it ("2026-12-01T19:23:24+05:00", "--12-01T16:16:57" for glog's
// `E1201 16:16:57`); LogClock turns that into
//   - a time with its zone: the same instant in UTC, "2026-12-01T14:23:24Z" (its fraction kept);
//   - a year-less time: its year added, "2026-12-01T16:16:57", the year that puts it closest to
//     the source's last full time (a line's own or its wrapper's), else to the reference time
//     given (the file's modification time), else to now; so a log that runs over New Year's Eve
//     goes on into the next year;
//   - a full time without a zone: as it is (the log's local time, zone unknown);
//   - anything else (epoch numbers, monotonic seconds): as it is.
// SOURCE_DATE_EPOCH, when set, is taken instead of the file's time and now (reproducible
// reports, as reproducible-builds.org defines it).
// Cheap per line: most lines leave the string as it is, or change two bytes of it into four.
// Not thread-safe (one per stream).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "triage/ingest/event.h"

namespace triage::ingest::detail {

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d);

// Seconds since the epoch (UTC) of an ISO 8601 time with a full date; its zone applied when it
// has one, else taken as UTC. False when `t` is no such time.
bool IsoToEpoch(std::string_view t, int64_t& seconds);

class LogClock {
 public:
  // `reference`: seconds since the epoch to take a year from before the source shows one (0:
  // now).
  explicit LogClock(int64_t reference);

  // Rewrites `time` in place (see above); returns true when it added a year. `wrapper_time`:
  // the time the line's wrapper gave it, when it has one (the best reference for its year).
  bool Normalize(OptionalString& time, std::string_view wrapper_time = {}) {
    if (!time) return false;
    std::string& s = *time;
    // The two shapes nearly every timed line has, inline: a year-less time of the day seen last
    // (its year known), and a full time without a zone or in UTC (only remembered).
    if (s.size() >= 16 && s[0] == '-') {
      if (last_year_ != 0 && s[1] == '-' && std::memcmp(last_day_, s.data() + 2, 5) == 0 && s[4] == '-' &&
          (s[7] == 'T' || s[7] == ' ')) {
        char y4[4] = {char('0' + last_year_ / 1000), char('0' + last_year_ / 100 % 10),
                      char('0' + last_year_ / 10 % 10), char('0' + last_year_ % 10)};
        s.replace(0, 1, y4, 4);
        return true;
      }
    } else if (s.size() >= 19 && s[4] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
               (s.size() == 19 || s[19] == '.' || (s.size() == 20 && s[19] == 'Z'))) {
      // Its fraction, and a 'Z' or nothing after it.
      size_t e = s.size() > 19 && s[19] == '.' ? 20 : 19;
      while (e < s.size() && s[e] >= '0' && s[e] <= '9') ++e;
      if (e == s.size() || (e + 1 == s.size() && s[e] == 'Z')) {
        Remember(s, true);
        return false;
      }
    }
    return NormalizeSlow(s, wrapper_time);
  }

 private:
  bool NormalizeSlow(std::string& s, std::string_view wrapper_time);
  // A full time seen: the reference from now on. `own`: the log (or its wrapper) wrote it, as
  // opposed to a year worked out here.
  void Remember(std::string_view full, bool own);
  int64_t Reference();                    // its seconds, computed when first needed

  int64_t fallback_;
  char last_full_[19];  // "YYYY-MM-DDTHH:MM:SS" of the last full time, in UTC or floating
  bool have_full_ = false;
  bool reference_done_ = false;
  int64_t reference_ = 0;
  // The year given to the last year-less time, and its "MM-DD": the next line of the same day
  // gets the same year without working it out again.
  char last_day_[5] = {0, 0, 0, 0, 0};
  int64_t last_year_ = 0;
};

}  // namespace triage::ingest::detail
