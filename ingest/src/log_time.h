// A line's time as the rest of triage keeps it (DESIGN.md section 5b, docs/log-formats.md): the
// decoder writes the time as far as the line tells it ("2026-12-01T19:23:24+05:00",
// "--12-01T16:16:57" for glog's `E1201 16:16:57`); LogClock turns that into
//   - a time with its zone: the same instant in UTC, "2026-12-01T14:23:24Z" (its fraction kept);
//   - a year-less time: its year added, "2026-12-01T16:16:57", the year that puts it closest to
//     the source's last full time (a line's own or its wrapper's), else to the reference time
//     given (the file's modification time), else to now; so a log that runs over New Year's Eve
//     goes on into the next year;
//   - a full time without a zone (a year-less one once its year is added): read in the log's
//     zone when that is known, and then the same instant in UTC ("...Z"); else as it is (the
//     log's local time, zone unknown). The log's zone is the one given (the `[analyze] timezone`
//     setting), else the offset the wrapper's clock shows against the line's own, rounded to
//     whole or half hours and learned from the first lines that carry both (a wrapper writes
//     its time when it reads the line, never before the program does: the largest difference
//     of the first kZoneSamples is the offset, less any delay), else none;
//   - anything else (epoch numbers, monotonic seconds): as it is.
// SOURCE_DATE_EPOCH, when set, is taken instead of the file's time and now (reproducible
// reports, as reproducible-builds.org defines it).
// Cheap per line: most lines leave the string as it is, or change two bytes of it into four.
// Not thread-safe (one per stream).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "triage/civil_time.h"
#include "triage/ingest/event.h"

namespace triage::ingest::detail {

// Seconds since the epoch (UTC) of an ISO 8601 time with a full date; its zone applied when it
// has one, else taken as UTC. False when `t` is no such time.
bool IsoToEpoch(std::string_view t, int64_t& seconds);

// `wrapper_time` (a wrapper's time: ISO 8601 with a full date and its zone) in UTC into `out`,
// "2026-11-02T09:14:51.123456789Z"; `out` absent when it is no such time (one without a zone
// included: that is no collector's clock).
void WrapperTimeInUtc(std::string_view wrapper_time, OptionalString& out);

class LogClock {
 public:
  // `reference`: seconds since the epoch to take a year from before the source shows one (0:
  // now). `zone`: seconds east of UTC of the times that carry no zone (the timezone setting);
  // nullopt: learned from the wrapper's clock, else none.
  // `seen`: seconds since the epoch of the last full time the source showed before this clock's
  // first line (0: none), taken as if read (it wins over `reference`).
  explicit LogClock(int64_t reference, std::optional<int32_t> zone = std::nullopt,
                    int64_t seen = 0);

  // How many lines that carry both a time without a zone and a wrapper's time the zone is
  // learned from.
  static constexpr int kZoneSamples = 8;

  // Rewrites `time` in place (see above); returns true when it added a year. `wrapper_time`:
  // the time the line's wrapper gave it, when it has one (the best reference for its year).
  bool Normalize(OptionalString& time, std::string_view wrapper_time = {}) {
    if (!time) return false;
    std::string& s = *time;
    // The two shapes nearly every timed line has, inline: a year-less time of the day seen last
    // (its year known), and a full time without a zone or in UTC (only remembered), while no
    // zone is to be read into the first nor learned from its wrapper.
    const bool as_is = !zone_known_ && (wrapper_time.empty() || tries_ >= kZoneSamples);
    if (s.size() >= 16 && s[0] == '-') {
      if (as_is && last_year_ != 0 && s[1] == '-' && std::memcmp(last_day_, s.data() + 2, 5) == 0 &&
          s[4] == '-' && (s[7] == 'T' || s[7] == ' ')) {
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
      if ((e == s.size() && as_is) || (e + 1 == s.size() && s[e] == 'Z')) {
        Remember(s, true);
        return false;
      }
    }
    return NormalizeSlow(s, wrapper_time);
  }

  // How the times without a zone read so far were read.
  const LogZone& zone() const { return zone_; }
  // Seconds since the epoch of the last full time read (or `seen`), 0 when none.
  int64_t LastFullTime() const;

 private:
  bool NormalizeSlow(std::string& s, std::string_view wrapper_time);
  // Adds the year to "--MM-DDTHH:MM:SS[.frac]"; false when it is no such time. `first_of_day`:
  // the year was worked out (not that of the day before).
  bool AddYear(std::string& s, std::string_view wrapper_time, bool& first_of_day);
  // A full time without a zone `local` and its wrapper's time: one more sample of the zone.
  void LearnZone(std::string_view local, std::string_view wrapper_time);
  // `s`, a full time without a zone ("YYYY-MM-DDTHH:MM:SS[.frac]"), read in the zone, in UTC.
  void ApplyZone(std::string& s) const;
  // A time without a zone was read: zone() says how.
  void NoteZoneless();
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
  // The zone of times without one: given, or learned (zone_known_), and what reports say of it.
  bool zone_given_ = false;
  bool zone_known_ = false;
  int32_t offset_ = 0;     // seconds east of UTC
  int tries_ = 0;          // lines with a time without a zone and a wrapper's time, looked at
  int samples_ = 0;        // of them, those whose wrapper's time had a zone (a clock)
  bool have_delta_ = false;
  int64_t max_delta_ = 0;  // the largest difference of the line's own time over its wrapper's
  LogZone zone_;
};

}  // namespace triage::ingest::detail
