// Reports: the JSON document of `analyze --json` (docs/json-report.md is the contract) and the
// terminal report for a person.
#pragma once

#include <string>
#include <vector>

#include "triage/core/incident.h"
#include "triage/json.h"

namespace triage::core {

// One incident object as in `analyze --json` (also `show --json`).
void WriteIncidentJson(JsonWriter& out, const Incident& incident);
// {"incidents": [...]}
std::string ReportJson(const std::vector<Incident>& incidents);
// The human report. `color`: ANSI colour (the caller decides: TTY and no NO_COLOR).
std::string ReportText(const std::vector<Incident>& incidents, bool color);

}  // namespace triage::core
