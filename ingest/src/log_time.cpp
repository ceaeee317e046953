#include "log_time.h"

#include <cstdlib>
#include <cstring>
#include <ctime>

namespace triage::ingest::detail {

namespace {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The value of the n digits at s[i], or -1 when they are not all digits.
int Num(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return -1;
  int v = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!IsDigit(s[i + k])) return -1;
    v = v * 10 + (s[i + k] - '0');
  }
  return v;
}

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2) return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28;
  return kDays[m - 1];
}

// "HH:MM:SS" at s[i] as seconds of the day, or -1.
int64_t ClockSeconds(std::string_view s, size_t i) {
  const int h = Num(s, i, 2), mi = Num(s, i + 3, 2), se = Num(s, i + 6, 2);
  if (h < 0 || mi < 0 || se < 0 || s[i + 2] != ':' || s[i + 5] != ':' || h > 23 || mi > 59 || se > 60)
    return -1;
  return int64_t(h) * 3600 + mi * 60 + se;
}

void Put(char* out, int64_t v, int width) {
  for (int k = width - 1; k >= 0; --k) {
    out[k] = char('0' + v % 10);
    v /= 10;
  }
}

// "YYYY-MM-DDTHH:MM:SS" of `seconds` (UTC) into out[0..19).
void FormatUtc(int64_t seconds, char* out) {
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  Put(out, y, 4);
  out[4] = '-';
  Put(out + 5, m, 2);
  out[7] = '-';
  Put(out + 8, d, 2);
  out[10] = 'T';
  Put(out + 11, rem / 3600, 2);
  out[13] = ':';
  Put(out + 14, rem / 60 % 60, 2);
  out[16] = ':';
  Put(out + 17, rem % 60, 2);
}

// Where the zone of a full time starts (after its seconds and fraction), or npos for no full
// time at s[0].
size_t ZoneStart(std::string_view s) {
  if (s.size() < 19 || Num(s, 0, 4) < 0 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
      ClockSeconds(s, 11) < 0)
    return std::string_view::npos;
  size_t e = 19;
  if (e < s.size() && (s[e] == '.' || s[e] == ',')) {
    ++e;
    while (e < s.size() && IsDigit(s[e])) ++e;
  }
  return e;
}

// The offset "+hh:mm", "+hhmm" or "+hh" at s[i] in seconds east of UTC; false when there is none.
bool ZoneOffset(std::string_view s, size_t i, int64_t& offset) {
  if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
  const int h = Num(s, i + 1, 2);
  if (h < 0 || h > 23) return false;
  int mi = 0;
  size_t end = i + 3;
  if (end < s.size() && s[end] == ':') {
    mi = Num(s, end + 1, 2);
    end += 3;
  } else if (end < s.size()) {
    mi = Num(s, end, 2);
    end += 2;
  }
  if (mi < 0 || mi > 59 || end != s.size()) return false;
  offset = (int64_t(h) * 3600 + mi * 60) * (s[i] == '-' ? -1 : 1);
  return true;
}

}  // namespace

bool IsoToEpoch(std::string_view t, int64_t& seconds) {
  const size_t zone = ZoneStart(t);
  if (zone == std::string_view::npos) return false;
  const int y = Num(t, 0, 4), mo = Num(t, 5, 2), d = Num(t, 8, 2);
  if (mo < 1 || mo > 12 || d < 1 || unsigned(d) > DaysInMonth(y, unsigned(mo))) return false;
  seconds = DaysFromCivil(y, unsigned(mo), unsigned(d)) * 86400 + ClockSeconds(t, 11);
  int64_t offset = 0;
  if (zone < t.size() && (t[zone] == '+' || t[zone] == '-') && ZoneOffset(t, zone, offset)) seconds -= offset;
  return true;
}

void WrapperTimeInUtc(std::string_view t, OptionalString& out) {
  const size_t zone = ZoneStart(t);
  if (zone == std::string_view::npos || zone >= t.size()) {
    out.reset();
    return;
  }
  if (zone + 1 == t.size() && (t[zone] == 'Z' || t[zone] == 'z')) {
    out = t;
    (*out)[10] = 'T';
    (*out)[zone] = 'Z';
    return;
  }
  int64_t offset = 0, secs = 0;
  if (!ZoneOffset(t, zone, offset) || !IsoToEpoch(t.substr(0, zone), secs)) {
    out.reset();
    return;
  }
  char utc[19];
  FormatUtc(secs - offset, utc);
  out = t.substr(0, zone);
  std::string& s = *out;
  std::memcpy(s.data(), utc, 19);
  s.push_back('Z');
}

LogClock::LogClock(int64_t reference, std::optional<int32_t> zone, int64_t seen)
    : fallback_(reference != 0 ? reference : int64_t(std::time(nullptr))) {
  if (seen != 0) {
    have_full_ = reference_done_ = true;
    reference_ = seen;
  }
  if (zone) {
    zone_given_ = zone_known_ = true;
    offset_ = *zone;
  }
  // Reproducible output (reproducible-builds.org's convention): a fixed time instead of the
  // file's and now.
  if (const char* sde = std::getenv("SOURCE_DATE_EPOCH"); sde && *sde) {
    char* end = nullptr;
    const long long v = std::strtoll(sde, &end, 10);
    if (end && *end == '\0' && v > 0) fallback_ = int64_t(v);
  }
}

void LogClock::Remember(std::string_view full, bool own) {
  if (full.size() < 19) return;
  std::memcpy(last_full_, full.data(), 19);
  have_full_ = true;
  reference_done_ = false;
  // A full time the log wrote itself says which year it is: a year worked out before for the
  // year-less times of a day may have been a guess from the file's time.
  if (own && last_year_ != 0 && Num(full, 0, 4) != last_year_) last_year_ = 0;
}

int64_t LogClock::LastFullTime() const {
  if (!have_full_) return 0;
  if (reference_done_) return reference_;
  int64_t s = 0;
  return IsoToEpoch(std::string_view(last_full_, 19), s) ? s : 0;
}

int64_t LogClock::Reference() {
  if (!have_full_) return fallback_;
  if (!reference_done_) {
    int64_t s = 0;
    reference_ = IsoToEpoch(std::string_view(last_full_, 19), s) ? s : fallback_;
    reference_done_ = true;
  }
  return reference_;
}

bool LogClock::AddYear(std::string& s, std::string_view wrapper_time, bool& first_of_day) {
  first_of_day = false;
  if (s[4] != '-' || (s[7] != 'T' && s[7] != ' ')) return false;
  int64_t year = 0;
  if (last_year_ != 0 && std::memcmp(last_day_, s.data() + 2, 5) == 0) {
    year = last_year_;
  } else {
    const int mo = Num(s, 2, 2), d = Num(s, 5, 2);
    const int64_t clock = ClockSeconds(s, 8);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || clock < 0) return false;
    if (ZoneStart(wrapper_time) != std::string_view::npos) Remember(wrapper_time, true);
    const int64_t ref = Reference();
    int64_t ry;
    unsigned rm, rd;
    CivilFromDays(ref >= 0 ? ref / 86400 : (ref - 86399) / 86400, ry, rm, rd);
    // Next to a time of the log's, the closest year (a log runs on over New Year's Eve); with
    // only the file's time or now to go by, the last year that is not after it (a line is
    // written before the file's last change), a day's slack for zones. The time compared is
    // the instant the line's zone makes of it, when that is known.
    const bool before_only = !have_full_;
    const int64_t east = zone_known_ ? offset_ : 0;
    int64_t best = -1;
    for (int64_t y = ry - 1; y <= ry + 1; ++y) {
      if (unsigned(d) > DaysInMonth(y, unsigned(mo))) continue;  // Feb 29 of a common year
      const int64_t t = DaysFromCivil(y, unsigned(mo), unsigned(d)) * 86400 + clock - east;
      if (before_only && t > ref + 86400) continue;
      const int64_t dist = t > ref ? t - ref : ref - t;
      if (best < 0 || dist < best) {
        best = dist;
        year = y;
      }
    }
    if (year == 0) return false;
    std::memcpy(last_day_, s.data() + 2, 5);
    last_year_ = year;
    first_of_day = true;
  }
  char y4[4];
  Put(y4, year, 4);
  s.replace(0, 1, y4, 4);
  return true;
}

void LogClock::LearnZone(std::string_view local, std::string_view wrapper_time) {
  // Only a wrapper's time with its zone is a clock to learn from (a JSON line's zone-less
  // `asctime` is the program's own).
  ++tries_;
  const size_t zone = ZoneStart(wrapper_time);
  if (zone == std::string_view::npos || zone >= wrapper_time.size()) return;
  int64_t own = 0, wrapped = 0;
  if (!IsoToEpoch(local, own) || !IsoToEpoch(wrapper_time, wrapped)) return;
  ++samples_;
  // Zones run from UTC-12:00 to UTC+14:00; a difference past them (a quoted time, a year-less
  // time given the wrong year) says nothing of the zone.
  const int64_t delta = own - wrapped;
  if (delta < -12 * 3600 - 900 || delta > 14 * 3600 + 900) return;
  if (have_delta_ && delta <= max_delta_) return;
  have_delta_ = true;
  max_delta_ = delta;
  // To the nearest half hour (a delta of -5.5 h + 0.2 s rounds to -5.5 h, not -5 h).
  const int64_t half_hours = (delta >= 0 ? delta + 900 : delta - 900) / 1800;
  offset_ = int32_t(half_hours * 1800);
  zone_known_ = true;
}

void LogClock::ApplyZone(std::string& s) const {
  int64_t secs = 0;
  if (!IsoToEpoch(std::string_view(s).substr(0, 19), secs)) return;
  char utc[19];
  FormatUtc(secs - offset_, utc);
  std::memcpy(s.data(), utc, 19);
  s.push_back('Z');
}

bool LogClock::NormalizeSlow(std::string& s, std::string_view wrapper_time) {
  bool dated = false, first_of_day = false;
  if (s.size() >= 16 && s[0] == '-' && s[1] == '-') {
    // "--MM-DDTHH:MM:SS[.frac]": a year to add. The lines of one day mostly follow each other:
    // the year found for the day before is taken again without working it out.
    if (!AddYear(s, wrapper_time, first_of_day)) return false;
    dated = true;
  }
  // A full time, as the decoder writes one (its digits checked there): where its zone starts.
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':')
    return false;
  size_t zone = 19;
  if (zone < s.size() && (s[zone] == '.' || s[zone] == ',')) {
    ++zone;
    while (zone < s.size() && IsDigit(s[zone])) ++zone;
  }
  if (s[10] == ' ') s[10] = 'T';
  if (zone == s.size()) {
    // No zone: the log's, when it is known (or learned from this line's wrapper).
    if (!zone_given_ && !wrapper_time.empty() && tries_ < kZoneSamples) LearnZone(s, wrapper_time);
    if (zone_known_) ApplyZone(s);
    NoteZoneless();
    // The day's first line is the reference for what follows (a log going on past New Year's
    // Eve); the day's other lines would tell nothing more.
    if (!dated || first_of_day) Remember(s, !dated);
    return dated;
  }
  if (dated) return true;  // a year-less time has no zone
  if (s[zone] == 'Z' || s[zone] == 'z') {
    s[zone] = 'Z';
    Remember(s, true);
    return false;
  }
  int64_t offset = 0;
  if (!ZoneOffset(s, zone, offset)) return false;
  int64_t secs = 0;
  if (!IsoToEpoch(std::string_view(s).substr(0, zone), secs)) return false;
  char utc[19];
  FormatUtc(secs - offset, utc);
  s.resize(zone);
  s.push_back('Z');
  std::memcpy(s.data(), utc, 19);
  Remember(s, true);
  return false;
}

void LogClock::NoteZoneless() {
  if (zone_given_) zone_ = {offset_, ZoneOrigin::kSetting};
  else if (zone_known_) zone_ = {offset_, ZoneOrigin::kWrapper};
  else if (samples_ > 0) zone_ = {0, ZoneOrigin::kUnknown};
}

}  // namespace triage::ingest::detail
