// What the site's pages share: the incidents a request's filters select, read once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "html.h"
#include "triage/store/store.h"

namespace triage::page::detail {

// The filters of the list and the hosts page, as the query gave them.
struct Filters {
  std::string cause, host, service, since;
  // "cause=...&host=..." of the non-empty ones, encoded, for links that keep them.
  std::string Query() const;
};

// The incidents the filters select, newest first, each read whole (its hosts, ranks,
// versions); at most kMaxSelected. `error` is set (and nothing read) for a filter that does not
// parse or a store that cannot be read.
struct Selection {
  std::vector<store::StoredIncident> incidents;
  bool more = false;  // the filters selected more than were read
  std::string error;
  bool bad_request = false;
};
inline constexpr size_t kMaxSelected = 500;
Selection Select(store::Store& store, const Filters& filters);

// Counts per time bucket ("2026-12-01", or "2026-12-01T10" for an hour) and cause.
using Buckets = std::map<std::string, std::map<std::string, int64_t>>;
// The occurrences per day of the selected incidents, under their first causes (the store
// counts occurrences per day).
Buckets OccurrencesPerDay(const std::vector<store::DayCount>& counts,
                          const std::vector<store::StoredIncident>& incidents);
// The selected incidents per hour they were last seen in, under their first causes (the store
// keeps no finer time of each occurrence).
Buckets IncidentsPerHour(const std::vector<store::StoredIncident>& incidents);
// Stacked bars (SVG), a bar per bucket, the latest `keep` buckets, and their legend.
std::string Bars(const Buckets& buckets, size_t keep = 60);

// Hosts by cause: occurrences per host (rows) and first cause (columns), each host's versions
// (driver, CUDA, ...) as its incidents show them, and under it, per cause, whether it follows a
// node or a version.
std::string HostMatrix(const std::vector<store::StoredIncident>& incidents);

}  // namespace triage::page::detail
