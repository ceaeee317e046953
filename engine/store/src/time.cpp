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
  // YYYY-MM-DD[T ]HH:MM[:SS][anything: fraction, zone]
  if (!IsDate(t) || t.size() < 16 || (t[10] != 'T' && t[10] != ' ')) return std::nullopt;
  if (!Digits(t, 11, 2, 0, 23) || t[13] != ':' || !Digits(t, 14, 2, 0, 59)) return std::nullopt;
  std::string out(t.substr(0, 10));
  out += 'T';
  out += t.substr(11, 5);
  if (t.size() >= 19 && t[16] == ':' && Digits(t, 17, 2, 0, 60)) {
    out += t.substr(16, 3);
  } else {
    out += ":00";
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
  // A duration: digits and one unit.
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() - 1 || n < 0) {
    return Status::InvalidInput("'" + shown +
                                "' is neither a duration (30m, 12h, 2d, 1w) nor an ISO 8601 time");
  }
  int64_t unit = 0;
  switch (text.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default:
      return Status::InvalidInput("'" + shown + "': unknown unit (use s, m, h, d or w)");
  }
  if (n > (int64_t{1} << 40) / unit) return Status::InvalidInput("'" + shown + "' is too long ago");
  return FormatUtc(now - n * unit);
}

}  // namespace triage::store
