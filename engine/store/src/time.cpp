// Times as the store keeps them: "YYYY-MM-DDTHH:MM:SS", which sorts and compares as text.
#include <cctype>
#include <charconv>
#include <ctime>
#include <string>

#include "triage/store/store.h"

namespace triage::store {

namespace {

std::string FormatUtc(int64_t epoch_seconds) {
  std::time_t t = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

bool Digits(std::string_view s, size_t pos, size_t n, int lo, int hi) {
  if (s.size() < pos + n) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  return v >= lo && v <= hi;
}

bool IsDate(std::string_view s) {
  return Digits(s, 0, 4, 0, 9999) && s.size() >= 10 && s[4] == '-' && Digits(s, 5, 2, 1, 12) &&
         s[7] == '-' && Digits(s, 8, 2, 1, 31);
}

}  // namespace

std::string NowUtc() { return FormatUtc(static_cast<int64_t>(std::time(nullptr))); }

std::optional<std::string> NormalizeTime(std::string_view t) {
  // YYYY-MM-DD[T ]HH:MM[:SS][.fraction][Z|+hh:mm|+hhmm|+hh|anything else]
  if (!IsDate(t) || t.size() < 16 || (t[10] != 'T' && t[10] != ' ')) return std::nullopt;
  if (!Digits(t, 11, 2, 0, 23) || t[13] != ':' || !Digits(t, 14, 2, 0, 59)) return std::nullopt;
  std::string out(t.substr(0, 10));
  out += 'T';
  out += t.substr(11, 5);
  size_t zone = 16;
  if (t.size() >= 19 && t[16] == ':' && Digits(t, 17, 2, 0, 60)) {
    out += t.substr(16, 3);
    zone = 19;
  } else {
    out += ":00";
  }
  if (zone < t.size() && (t[zone] == '.' || t[zone] == ',')) {
    ++zone;
    while (zone < t.size() && std::isdigit(static_cast<unsigned char>(t[zone]))) ++zone;
  }
  // A zone's offset, applied: the stored time is UTC.
  if (zone + 3 <= t.size() && (t[zone] == '+' || t[zone] == '-') && Digits(t, zone + 1, 2, 0, 23)) {
    size_t m = zone + 3;
    if (m < t.size() && t[m] == ':') ++m;
    const int hours = (t[zone + 1] - '0') * 10 + (t[zone + 2] - '0');
    const int minutes = Digits(t, m, 2, 0, 59) ? (t[m] - '0') * 10 + (t[m + 1] - '0') : 0;
    const int64_t offset = (int64_t(hours) * 3600 + minutes * 60) * (t[zone] == '-' ? -1 : 1);
    std::tm tm{};
    tm.tm_year = std::stoi(out.substr(0, 4)) - 1900;
    tm.tm_mon = std::stoi(out.substr(5, 2)) - 1;
    tm.tm_mday = std::stoi(out.substr(8, 2));
    tm.tm_hour = std::stoi(out.substr(11, 2));
    tm.tm_min = std::stoi(out.substr(14, 2));
    tm.tm_sec = std::stoi(out.substr(17, 2));
    out = FormatUtc(int64_t(timegm(&tm)) - offset);
  }
  return out;
}

Result<std::string> ParseSince(std::string_view text, int64_t now) {
  const std::string shown(text);
  if (text.empty()) return Status::InvalidInput("empty time");
  if (IsDate(text)) {
    if (text.size() == 10) return std::string(text) + "T00:00:00";
    if (auto t = NormalizeTime(text)) return *t;
    return Status::InvalidInput("'" + shown + "' is not an ISO 8601 date or time");
  }
  // systemd.time(7)'s words: midnight of a day (UTC, as stored times are).
  const int64_t midnight = now - ((now % 86400) + 86400) % 86400;
  if (text == "now") return FormatUtc(now);
  if (text == "today") return FormatUtc(midnight);
  if (text == "yesterday") return FormatUtc(midnight - 86400);
  if (text == "tomorrow") return FormatUtc(midnight + 86400);
  // A duration before now: "2d"; systemd's "-2d", "-2 days", "2d ago", "2 days ago".
  bool relative = false;
  if (text.front() == '-') {
    text.remove_prefix(1);
    relative = true;
  }
  if (text.size() > 4 && text.substr(text.size() - 4) == " ago") {
    text.remove_suffix(4);
    relative = true;
  }
  std::string compact;
  for (char c : text)
    if (c != ' ' || !relative) compact += c;
  text = compact;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end == text.data() + text.size() || n < 0) {
    return Status::InvalidInput("'" + shown +
                                "' is neither a duration (30m, 12h, 2d, 1w, -2h, 2h ago), a day "
                                "(today, yesterday) nor an ISO 8601 time");
  }
  const std::string_view unit_name = text.substr(size_t(end - text.data()));
  // Without "ago" or "-", only the short form: "2 days" alone reads as a span, not a time.
  if (!relative && unit_name.size() != 1)
    return Status::InvalidInput("'" + shown + "': write 2d, -2d or '2 days ago'");
  int64_t unit = 0;
  if (unit_name == "s" || unit_name == "sec" || unit_name == "second" || unit_name == "seconds") unit = 1;
  else if (unit_name == "m" || unit_name == "min" || unit_name == "minute" || unit_name == "minutes") unit = 60;
  else if (unit_name == "h" || unit_name == "hour" || unit_name == "hours") unit = 3600;
  else if (unit_name == "d" || unit_name == "day" || unit_name == "days") unit = 86400;
  else if (unit_name == "w" || unit_name == "week" || unit_name == "weeks") unit = 7 * 86400;
  else return Status::InvalidInput("'" + shown + "': unknown unit (use s, m, h, d or w)");
  if (n > (int64_t{1} << 40) / unit) return Status::InvalidInput("'" + shown + "' is too long ago");
  return FormatUtc(now - n * unit);
}

}  // namespace triage::store
