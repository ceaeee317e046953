// The shipped rule packs (rules/*.toml), loaded once per test binary; a load fault fails the test
// that first asks.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "triage/core/rules.h"

namespace triage::testing {

inline std::shared_ptr<const core::RuleSet> ShippedRules() {
  static std::shared_ptr<const core::RuleSet> rules = [] {
    auto r = core::LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules"});
    for (const auto& d : r.diagnostics) ADD_FAILURE() << d.ToString();
    return r.rules;
  }();
  return rules;
}

}  // namespace triage::testing
