// The incident pages: one self-contained HTML document per incident (`triage show --html`) and
// the read-only site `triage serve` answers with (the incident list with its filters, an
// incident, a job's timeline, counts by cause over time, hosts by cause).
//
// Every page is HTML with inline CSS and inline SVG: no script, nothing fetched from elsewhere
// (kContentSecurityPolicy forbids both, also in the document's own <meta>). Everything a log or
// the store holds is written through HtmlText, so no log text is ever read as markup.
//
// Pure functions of what they are given, but Site, which reads its Store: like the Store, one
// Site is used by one thread.
#pragma once

#include <string>
#include <string_view>

#include "triage/core/incident.h"
#include "triage/store/store.h"

namespace triage::page {

// `text` for HTML element content or a quoted attribute value: first made visible as
// triage/terminal_text.h does (controls, bidirectional overrides and bytes that are not UTF-8
// become printable escapes, a newline too), then &, <, >, " and ' as character references. The
// result is valid UTF-8 and holds no markup.
std::string HtmlText(std::string_view text);

// What every page is sent with and holds in a <meta>: nothing may load or run but the page's
// own inline style (and images written into it).
inline constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'";

// The job's processes as SVG: one lane per entry of `incident.ranks`, its mark at the seconds
// after the job's first failure (in order where the log has no times), coloured by its state.
// Empty when the incident has no ranks.
std::string TimelineSvg(const core::Incident& incident);

// The stored incident as one HTML document: its causes with their evidence lines, remedies,
// symptoms, verdicts and known bugs, its versions, hosts and history, and the job's timeline
// when it is a job's. `links` adds links to the site's other pages (serve); a document for a
// file has none.
std::string IncidentDocument(const store::StoredIncident& stored, bool links = false);

struct Page {
  int status = 200;
  std::string body;  // text/html; charset=utf-8
};

// The pages of `triage serve`, read from `store` (which it never writes):
//   /                 incidents, newest first, filtered by ?cause= (an id or its prefix) &host=
//                     &service= &since= (2d, 12h, an ISO date or time), with the occurrences of
//                     their causes per day as bars (?by=hour: the incidents per hour they
//                     were last seen)
//   /incident/ID      IncidentDocument, with links
//   /job/ID           the incident's job: its timeline and its ranks
//   /hosts            hosts by cause for the same filters, with the versions each host's
//                     incidents show, and whether a cause follows a node or a version
// Anything else is 404; a store that cannot be read is 500 with its message (escaped).
class Site {
 public:
  explicit Site(store::Store& store) : store_(store) {}
  Page Get(std::string_view target);

 private:
  store::Store& store_;
};

}  // namespace triage::page
