// Log times as numbers, for comparing them (internal to triage::core).
#pragma once

#include <optional>
#include <string_view>

namespace triage::core::detail {

// Seconds since the epoch of an ISO 8601 time that carries a full date ("2026-11-02T09:14:03",
// with or without a fraction; the zone, if any, is not applied: the ingest has put the log's
// times in UTC already). nullopt otherwise: a year-less or boot-relative stamp is not
// comparable across sources.
std::optional<double> DatedSeconds(std::string_view s);

}  // namespace triage::core::detail
