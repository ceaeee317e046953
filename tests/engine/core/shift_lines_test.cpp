// An incident found in a part of an input is numbered as in the whole input by one function
// (core::ShiftLines), used by the daemon's pipelines and by analyze's parallel splitter alike.
#include <gtest/gtest.h>

#include "triage/core/incident.h"

namespace triage::core {
namespace {

TEST(ShiftLinesTest, MovesTheSpanTheFailureLineAndEveryEvidenceLine) {
  Incident inc;
  inc.first_line = 3;
  inc.last_line = 9;
  inc.failure_line = 5;
  Cause c;
  c.cause = "cuda.oom";
  c.evidence.push_back({"svc.log", 5, "CUDA out of memory"});
  Symptom sym;
  sym.evidence.push_back({"svc.log", 8, "NCCL watchdog timeout"});
  c.symptoms.push_back(sym);
  inc.causes.push_back(c);

  ShiftLines(inc, 100);
  EXPECT_EQ(inc.first_line, 103u);
  EXPECT_EQ(inc.last_line, 109u);
  EXPECT_EQ(inc.failure_line, 105u);
  EXPECT_EQ(inc.causes[0].evidence[0].line, 105u);
  EXPECT_EQ(inc.causes[0].symptoms[0].evidence[0].line, 108u);

  ShiftLines(inc, 0);
  EXPECT_EQ(inc.first_line, 103u);
}

}  // namespace
}  // namespace triage::core
