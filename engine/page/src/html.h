// What the pages share: the document around a body, its one style sheet, colours by cause, and
// the parts of a request's target.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace triage::page::detail {

// "<!DOCTYPE html>...<title>TITLE</title>...<body>BODY</body></html>", with the
// Content-Security-Policy in a <meta> and the style sheet inline. `title` is escaped here;
// `body` is markup the caller built (every text in it already through HtmlText).
std::string Document(std::string_view title, std::string_view body);

// The site's navigation bar (serve's pages only).
std::string Navigation();

// A colour for a cause id, the same for the same id on every page (one of a fixed palette).
const char* CauseColour(std::string_view cause);

// `text` percent-encoded for a query value (everything but letters, digits and -._~).
std::string QueryValue(std::string_view text);

// A request's target split: its path and its query's parameters, percent- and '+'-decoded (a
// later repeat of a name wins). Bytes that decode to invalid UTF-8 stay as they are; every use
// escapes them.
struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};
Target ParseTarget(std::string_view target);

// An https:// or http:// URL as an <a>, else the text alone (a stored value is never a
// javascript: or data: link).
std::string LinkOrText(std::string_view url, std::string_view text);

}  // namespace triage::page::detail
