// "Did you mean" for names a person types: command-line options, configuration keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace triage::core {

// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours), when it is near enough to be a typo: at most 1 edit for words of up to
// 4 characters, 2 up to 8, 3 beyond. Ties go to the earlier candidate. nullopt when none is.
std::optional<std::string> NearestName(std::string_view word,
                                       const std::vector<std::string>& candidates);

}  // namespace triage::core
