#include "triage/redact.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace triage {

namespace {

bool SecretName(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kNames = {
      "password", "sslpassword", "passfile", "token",     "access_token", "secret",
      "key",      "api_key",     "apikey",   "auth",      "signature",    "sig"};
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return std::find(kNames.begin(), kNames.end(), lower) != kNames.end();
}

bool NameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// The end of the value that starts at `i`: a quoted one ('...' with \' escapes, as libpq
// writes it) to its closing quote, else to the next separator of a query or keyword list.
size_t ValueEnd(std::string_view s, size_t i) {
  if (i < s.size() && s[i] == '\'') {
    for (size_t k = i + 1; k < s.size(); ++k) {
      if (s[k] == '\\') ++k;
      else if (s[k] == '\'') return k + 1;
    }
    return s.size();
  }
  size_t k = i;
  while (k < s.size() && s[k] != '&' && s[k] != ';' && s[k] != '#' && s[k] != ' ' && s[k] != '\t' &&
         s[k] != '\n' && s[k] != '"' && !(s[k] == ':' && k + 1 < s.size() && s[k + 1] == ' '))
    ++k;
  return k;
}

}  // namespace

std::string RedactSecrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    // A URL's user part: "://user:secret@" (the secret ends at the last '@' before the host).
    if (text.compare(i, 3, "://") == 0) {
      const size_t start = i + 3;
      size_t end = start;
      while (end < text.size() && text[end] != '/' && text[end] != '?' && text[end] != '#' &&
             text[end] != ' ' && text[end] != '"')
        ++end;
      const std::string_view authority = text.substr(start, end - start);
      const size_t at = authority.rfind('@');
      const size_t colon = authority.find(':');
      out.append("://");
      if (at != std::string_view::npos && colon != std::string_view::npos && colon < at) {
        out.append(authority.substr(0, colon + 1)).append("***").append(authority.substr(at));
      } else {
        out.append(authority);
      }
      i = end;
      continue;
    }
    // "name=value" where name is a secret's, as a query parameter or a libpq keyword.
    if (text[i] == '=' && i > 0) {
      size_t end = out.size();
      while (end > 0 && out[end - 1] == ' ') --end;  // libpq allows "password = x"
      size_t n = end;
      while (n > 0 && NameChar(out[n - 1])) --n;
      const std::string_view name(out.data() + n, end - n);
      if (!name.empty() && SecretName(name)) {
        size_t v = i + 1;
        while (v < text.size() && text[v] == ' ') ++v;
        out.append("=***");
        i = ValueEnd(text, v);
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

bool IsLibpqKeywords(std::string_view target) {
  static constexpr std::array<std::string_view, 10> kKeys = {
      "host", "hostaddr", "port", "dbname", "user", "password", "service", "sslmode",
      "connect_timeout", "application_name"};
  size_t i = 0;
  while (i < target.size() && std::isspace(static_cast<unsigned char>(target[i]))) ++i;
  size_t k = i;
  while (k < target.size() && NameChar(target[k])) ++k;
  size_t eq = k;
  while (eq < target.size() && target[eq] == ' ') ++eq;
  if (eq >= target.size() || target[eq] != '=') return false;
  return std::find(kKeys.begin(), kKeys.end(), target.substr(i, k - i)) != kKeys.end();
}

}  // namespace triage
