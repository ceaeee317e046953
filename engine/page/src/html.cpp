// Escaping, the document frame and the style: the one place page markup is assembled from.
#include "html.h"

#include "triage/page/page.h"
#include "triage/terminal_text.h"

namespace triage::page {

std::string HtmlText(std::string_view text) {
  const std::string visible = TerminalText(text);
  std::string out;
  out.reserve(visible.size() + visible.size() / 8);
  for (char c : visible) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace detail {
namespace {

// One sheet for every page; system fonts only (nothing is fetched).
constexpr const char* kStyle = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:16px 24px 40px}
nav{background:#1d2330;padding:8px 24px}nav a{color:#dfe6f3;margin-right:18px;text-decoration:none}
h1{font-size:20px;margin:8px 0 4px}h2{font-size:16px;margin:22px 0 6px}h3{font-size:14px;margin:14px 0 4px}
a{color:#1f5fbf}
table{border-collapse:collapse;background:#fff;margin:6px 0}
th,td{border:1px solid #d9dde5;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f6;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.incidents td:nth-child(2),.incidents td:nth-child(4){white-space:nowrap}
.meta td:first-child{color:#5a6475;white-space:nowrap}
.cause{background:#fff;border:1px solid #d9dde5;border-left:6px solid var(--c,#888);padding:8px 14px;margin:12px 0}
.band{display:inline-block;padding:0 6px;border-radius:3px;background:#eef1f6;font-size:12px}
.remedy{background:#eef7ee;border:1px solid #c9e2c9;padding:6px 10px;margin:6px 0}
.ev{font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;margin:0;padding:1px 0}
.ev .loc{color:#6b7280;margin-right:8px}
.evidence{background:#fbfbfc;border:1px solid #e3e6ec;padding:6px 8px;margin:4px 0}
.verdict-confirmed{color:#0a7a2f;font-weight:600}.verdict-refuted{color:#b42318;font-weight:600}
.bug{background:#fff7e6;border:1px solid #f0d9a8;padding:6px 10px;margin:6px 0}
form.filters input{width:150px;margin-right:8px}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
.follows{font-size:13px;color:#3b4352}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
)css";

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string Document(std::string_view title, std::string_view body) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  out += HtmlText(kContentSecurityPolicy);
  out += "\"><meta name=\"viewport\" content=\"width=device-width\"><title>";
  out += HtmlText(title);
  out += "</title><style>";
  out += kStyle;
  out += "</style></head><body>";
  out += body;
  out += "</body></html>\n";
  return out;
}

std::string Navigation() {
  return "<nav><a href=\"/\">Incidents</a><a href=\"/hosts\">Hosts by cause</a></nav>";
}

const char* CauseColour(std::string_view cause) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and builds
  for (unsigned char c : cause) h = (h ^ c) * 1099511628211ull;
  return kPalette[h % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string QueryValue(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Target ParseTarget(std::string_view target) {
  Target t;
  const size_t q = target.find('?');
  t.path = Decode(target.substr(0, q));
  if (q == std::string_view::npos) return t;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const size_t eq = pair.find('=');
    if (!pair.empty())
      t.query[Decode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? std::string() : Decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return t;
}

std::string LinkOrText(std::string_view url, std::string_view text) {
  const bool web = url.starts_with("https://") || url.starts_with("http://");
  if (!web) return HtmlText(text);
  return "<a href=\"" + HtmlText(url) + "\" rel=\"noreferrer\">" + HtmlText(text) + "</a>";
}

}  // namespace detail
}  // namespace triage::page
