// How loud an incident's alert is: each root-cause id of the taxonomy belongs to one family, and
// each family has one severity. The table is written once, in alert_severity.cpp;
// docs/notifications.md shows it and packaging/prometheus/triage-alerts.yml follows it (a test
// checks that it does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace triage::daemon {

struct AlertClass {
  std::string_view family;    // "hardware", "memory", "compatibility", ...
  std::string_view severity;  // "critical", "error" or "warning"
};

// The class of a cause id. A finer id takes its taxonomy id's class
// ("cuda.toolkit_too_old_for_arch.nvrtc" is "cuda.toolkit_too_old_for_arch"'s); an id the table
// does not know (a rule of the site's own) is {"other", "error"}.
AlertClass ClassifyCause(std::string_view cause);

// The table's rows, for the documentation's and the alert rules' tests.
struct AlertClassRow {
  std::string_view cause;
  AlertClass cls;
};
const std::vector<AlertClassRow>& AlertClassTable();

}  // namespace triage::daemon
