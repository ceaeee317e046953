#include "times.h"

#include <cctype>
#include <cstddef>

namespace triage::core::detail {

std::optional<double> DatedSeconds(std::string_view s) {
  if (s.size() < 19) return std::nullopt;
  auto num = [&](size_t pos, size_t len, int& out) {
    out = 0;
    for (size_t k = pos; k < pos + len; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
      out = out * 10 + (s[k] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, se;
  if (!num(0, 4, y) || s[4] != '-' || !num(5, 2, mo) || s[7] != '-' || !num(8, 2, d) ||
      (s[10] != 'T' && s[10] != ' ') || !num(11, 2, h) || s[13] != ':' || !num(14, 2, mi) ||
      s[16] != ':' || !num(17, 2, se))
    return std::nullopt;
  // Days from the civil date (proleptic Gregorian).
  y -= mo <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = unsigned(y - era * 400);
  const unsigned doy = unsigned((153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1);
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = double(era) * 146097 + double(doe) - 719468;
  double secs = days * 86400 + h * 3600 + mi * 60 + se;
  if (s.size() > 20 && s[19] == '.') {
    double frac = 0, scale = 0.1;
    for (size_t k = 20; k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); ++k) {
      frac += (s[k] - '0') * scale;
      scale /= 10;
    }
    secs += frac;
  }
  return secs;
}

}  // namespace triage::core::detail
