// Verdicts feed back into the ranking (core::ApplyVerdicts): confirmed up, refuted below every
// cause that no verifier refuted; of two nearly equal independent failures the earlier leads
// (core::PutEarlierFailureFirst).
#include <gtest/gtest.h>

#include "triage/core/incident.h"
#include "triage/core/verifier.h"

namespace triage::core {
namespace {

Cause MakeCause(const std::string& id, double score, std::optional<Verdict> verdict) {
  Cause c;
  c.cause = id;
  c.score = score;
  c.band = ScoreBand(score);
  c.evidence.push_back({"svc.log", 10, "the same line"});
  if (verdict) c.verifications.push_back({"test.verifier", *verdict, "because", "{}", "host", 1});
  return c;
}

std::vector<std::string> Order(const Incident& inc) {
  std::vector<std::string> out;
  for (const auto& c : inc.causes) out.push_back(c.cause);
  return out;
}

TEST(VerdictsTest, ConfirmedOutranksUnverifiedWithTheSameEvidenceAndRefutedFallsBelowBoth) {
  Incident inc;
  // Equal scores, the refuted one first and the confirmed one last, so that only the verdicts
  // can produce the expected order.
  inc.causes.push_back(MakeCause("refuted.cause", 0.8, Verdict::kRefuted));
  inc.causes.push_back(MakeCause("unverified.cause", 0.8, std::nullopt));
  inc.causes.push_back(MakeCause("confirmed.cause", 0.8, Verdict::kConfirmed));
  ApplyVerdicts(inc);
  EXPECT_EQ(Order(inc),
            (std::vector<std::string>{"confirmed.cause", "unverified.cause", "refuted.cause"}));
  for (size_t i = 0; i < inc.causes.size(); ++i) EXPECT_EQ(inc.causes[i].rank, int(i) + 1);
  EXPECT_GT(inc.causes[0].score, 0.8);
  EXPECT_DOUBLE_EQ(inc.causes[1].score, 0.8);
  EXPECT_LT(inc.causes[2].score, 0.8);
}

TEST(VerdictsTest, RefutedHighScoreFallsBelowWeakUnrefutedCause) {
  Incident inc;
  inc.causes.push_back(MakeCause("strong.but.refuted", 0.99, Verdict::kRefuted));
  inc.causes.push_back(MakeCause("weak.unverified", 0.2, std::nullopt));
  ApplyVerdicts(inc);
  EXPECT_EQ(Order(inc), (std::vector<std::string>{"weak.unverified", "strong.but.refuted"}));
}

TEST(VerdictsTest, InconclusiveAndSkippedChangeNothing) {
  Incident inc;
  inc.causes.push_back(MakeCause("a", 0.9, Verdict::kInconclusive));
  inc.causes.push_back(MakeCause("b", 0.5, Verdict::kSkipped));
  ApplyVerdicts(inc);
  EXPECT_EQ(Order(inc), (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(inc.causes[0].score, 0.9);
  EXPECT_DOUBLE_EQ(inc.causes[1].score, 0.5);
}

// A condition gone now (not_reproduced) or a host that is not the log's (not_applicable) says
// nothing against what the log shows: neither moves a score or a rank.
TEST(VerdictsTest, NotReproducedAndNotApplicableChangeNothing) {
  Incident inc;
  inc.causes.push_back(MakeCause("gone.now", 0.88, Verdict::kNotReproduced));
  inc.causes.push_back(MakeCause("other.host", 0.6, Verdict::kNotApplicable));
  inc.causes.push_back(MakeCause("unverified", 0.5, std::nullopt));
  ApplyVerdicts(inc);
  EXPECT_EQ(Order(inc), (std::vector<std::string>{"gone.now", "other.host", "unverified"}));
  EXPECT_DOUBLE_EQ(inc.causes[0].score, 0.88);
  EXPECT_DOUBLE_EQ(inc.causes[1].score, 0.6);
  EXPECT_EQ(inc.causes[0].band, "likely");
}

TEST(VerdictsTest, EveryVerdictNameReadsBack) {
  for (Verdict v : {Verdict::kConfirmed, Verdict::kRefuted, Verdict::kInconclusive, Verdict::kSkipped,
                    Verdict::kNotReproduced, Verdict::kNotApplicable}) {
    auto back = VerdictFromName(VerdictName(v));
    ASSERT_TRUE(back.has_value()) << VerdictName(v);
    EXPECT_EQ(*back, v);
  }
  EXPECT_STREQ(VerdictName(Verdict::kNotReproduced), "not_reproduced");
  EXPECT_STREQ(VerdictName(Verdict::kNotApplicable), "not_applicable");
  EXPECT_FALSE(VerdictFromName("refute").has_value());
}

TEST(VerdictsTest, ConfirmedAndRefutedByTwoVerifiersCountsAsConfirmed) {
  Incident inc;
  inc.causes.push_back(MakeCause("other", 0.7, std::nullopt));
  Cause mixed = MakeCause("mixed", 0.6, Verdict::kConfirmed);
  mixed.verifications.push_back({"second", Verdict::kRefuted, "", "{}", "host", 1});
  inc.causes.push_back(mixed);
  ApplyVerdicts(inc);
  EXPECT_EQ(inc.causes[0].cause, "mixed");
}

// Two failures that stand on their own and weigh about the same: the one the log shows first is
// the one the service met first (the second came once it was worked around), so it leads.
Cause Independent(const std::string& id, double score, uint64_t line,
                  std::optional<Verdict> verdict = std::nullopt) {
  Cause c = MakeCause(id, score, verdict);
  c.evidence = {{"svc.log", line, "line " + std::to_string(line)}};
  c.independent = true;
  return c;
}

TEST(VerdictsTest, OfTwoNearlyEqualIndependentFailuresTheEarlierLeads) {
  Incident inc;
  inc.causes.push_back(Independent("later.failure", 0.96, 48));
  inc.causes.push_back(Independent("earlier.failure", 0.88, 23));
  PutEarlierFailureFirst(inc);
  EXPECT_EQ(Order(inc), (std::vector<std::string>{"earlier.failure", "later.failure"}));
  EXPECT_EQ(inc.causes[0].rank, 1);
  EXPECT_EQ(inc.causes[1].rank, 2);
  // The same after the verdicts' ordering, which sorts by score first.
  ApplyVerdicts(inc);
  EXPECT_EQ(Order(inc), (std::vector<std::string>{"earlier.failure", "later.failure"}));
}

TEST(VerdictsTest, TheEarlierFailureDoesNotLeadAcrossAWideGapAConfirmationOrAShare) {
  {  // more than kNearTie apart
    Incident inc;
    inc.causes.push_back(Independent("strong", 0.96, 48));
    inc.causes.push_back(Independent("weak.earlier", 0.80, 23));
    PutEarlierFailureFirst(inc);
    EXPECT_EQ(Order(inc), (std::vector<std::string>{"strong", "weak.earlier"}));
  }
  {  // the first one confirmed by a check, the earlier one not
    Incident inc;
    inc.causes.push_back(Independent("confirmed", 0.90, 48, Verdict::kConfirmed));
    inc.causes.push_back(Independent("unverified.earlier", 0.88, 23));
    ApplyVerdicts(inc);
    EXPECT_EQ(Order(inc), (std::vector<std::string>{"confirmed", "unverified.earlier"}));
  }
  {  // causes that share evidence are one failure read two ways, not two failures
    Incident inc;
    inc.causes.push_back(Independent("first", 0.96, 48));
    inc.causes.push_back(Independent("second", 0.90, 23));
    inc.causes[1].independent = false;
    PutEarlierFailureFirst(inc);
    EXPECT_EQ(Order(inc), (std::vector<std::string>{"first", "second"}));
  }
}

}  // namespace
}  // namespace triage::core
