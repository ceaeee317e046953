// Reports: the JSON document of `analyze --json` (docs/json-report.md is the contract) and the
// terminal report for a person.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "triage/core/incident.h"
#include "triage/json.h"

namespace triage::core {

// One incident object as in `analyze --json` (also `show --json`).
void WriteIncidentJson(JsonWriter& out, const Incident& incident);
// {"incidents": [...]}
std::string ReportJson(const std::vector<Incident>& incidents);
// One line for a known bug a cause fits: "vllm#8735, fixed in 0.6.2 (this log: 0.6.1): <summary>";
// for a version past the fix, "should be fixed in 0.6.2; seen on 0.6.5: a regression or another
// cause"; without a version, "(possible: no vllm version in the log)".
std::string KnownBugLine(const KnownBugMatch& known_bug);
// How the human report is laid out.
struct TextOptions {
  bool color = false;  // ANSI colour (the caller decides: TTY and no NO_COLOR)
  // The terminal's columns: a longer log line (evidence) is cut to it with an ellipsis, other
  // text is wrapped under its indent. 0: nothing is cut or wrapped.
  size_t width = 0;
};
// The human report: with several incidents, a line for each first (and, for many, a count by
// cause at the end); a cause's evidence lines that say the same for several ranks or workers
// folded into one line that names them ("TP0-TP7 (8 lines): ...").
std::string ReportText(const std::vector<Incident>& incidents, const TextOptions& options);
// The same with no width limit.
std::string ReportText(const std::vector<Incident>& incidents, bool color);

}  // namespace triage::core
