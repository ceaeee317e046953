// The terminal report's layout (report.cpp): evidence lines that say the same for several ranks
// folded into one, and a report fitted to the terminal's width.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/incident.h"

namespace triage::core::detail {

// A run of consecutive evidence lines of one source that say the same once their prefix (a
// bracketed time and rank, "[2026-11-02 09:14:51 TP3]") is set aside. Lines that are the same
// whole, prefix and all, keep it in `body`.
struct EvidenceRun {
  const Evidence* first = nullptr;
  const Evidence* last = nullptr;
  size_t count = 0;
  std::string who;   // the ranks or workers, "TP0-TP7", "rank 0, rank 2"; empty when none is named
  std::string body;  // what they say (count > 1), without the prefix
};
std::vector<EvidenceRun> FoldEvidence(const std::vector<Evidence>& evidence);

// "TP0", "TP1", ..., "TP7" -> "TP0-TP7"; names of one prefix with gaps -> "TP0-TP3, TP5";
// "rank 0", "rank 2", "rank 3" -> "ranks 0, 2-3"; others listed, at most `shown` parts, then
// "and N more".
std::string NameRanks(const std::vector<std::string>& names, size_t shown = 8);

// A report line that starts with kCutMark is cut to the width (a log's line: its start says
// what it is); any other longer line is wrapped under its indent. The marks are removed.
inline constexpr char kCutMark = '\x01';
// `width` 0: nothing is cut or wrapped. ANSI colour sequences take no column.
std::string FitToWidth(std::string_view text, size_t width);

}  // namespace triage::core::detail
