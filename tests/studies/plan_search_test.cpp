// The race `april plan` runs (studies/plan_search): which plans its
// screening stops, and that its finalists' figures and each design's best
// are those of the exhaustive search.
#include "studies/plan_search.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace april::studies {
namespace {

PlanCandidate candidate(const std::string& policy, std::int64_t tp) {
  PlanCandidate c;
  c.plan.policy = policy;
  c.plan.tensor_parallel = tp;
  return c;
}

std::map<std::string, double> screened(double tok_s, double staleness_max) {
  return {{"effective_throughput_tok_s", tok_s}, {"staleness_max", staleness_max}};
}

// Worked by hand: within each design the best screening leads; a plan
// within 15% of it goes on, up to 2 per design; a plan breaking a
// constraint stops whatever its throughput, and does not lead.
TEST(PlanSearch, ScreeningKeepsEachDesignsLeadersWithinTheMargin) {
  const std::vector<PlanCandidate> c = {candidate("sync", 2),  candidate("sync", 4),  candidate("sync", 8),
                                        candidate("async", 2), candidate("async", 4), candidate("april", 2)};
  const std::vector<std::size_t> alive = {0, 1, 2, 3, 4, 5};
  const std::vector<std::map<std::string, double>> s = {
      screened(1000, 0),  // sync TP 2: the sync leader
      screened(900, 0),   // sync TP 4: 10% behind, but the third of its design
      screened(950, 0),   // sync TP 8: 5% behind, the second: goes on
      screened(2000, 6),  // async TP 2: breaks staleness_max<=4, stops, does not lead
      screened(1500, 2),  // async TP 4: leads async
      screened(10, 0),    // april alone: leads its design however slow
  };
  const auto why = screen_plans(c, alive, s, {parse_constraint("staleness_max<=4")}, "1 seed of 5 steps");
  EXPECT_EQ(why[0], "");
  EXPECT_EQ(why[2], "");
  EXPECT_EQ(why[1], "stopped after 1 seed of 5 steps: 900 tok/s, 10% behind sync, TP 2, colocated (1000)");
  EXPECT_EQ(why[3], "dropped by the constraint staleness_max<=4: staleness_max is 6 on 1 seed of 5 steps (the race drops a plan there)");
  EXPECT_EQ(why[4], "");
  EXPECT_EQ(why[5], "");
}

TEST(PlanSearch, APlanPastTheMarginStopsEvenAsTheSecond) {
  const std::vector<PlanCandidate> c = {candidate("sync", 2), candidate("sync", 4)};
  const auto why = screen_plans(c, {0, 1}, {screened(1000, 0), screened(849, 0)}, {}, "1 seed of 5 steps");
  EXPECT_EQ(why[0], "");
  EXPECT_EQ(why[1], "stopped after 1 seed of 5 steps: 849 tok/s, 15% behind sync, TP 2, colocated (1000)");
  // 850 is exactly 15% behind: within the margin.
  EXPECT_EQ(screen_plans(c, {0, 1}, {screened(1000, 0), screened(850, 0)}, {}, "x")[1], "");
}

// Past the design's 2 best, a plan within 2% of the best is a tie that one
// short run cannot order, and goes on; one 3% behind stops.
TEST(PlanSearch, APlanTiedWithTheBestGoesOnPastTheKeep) {
  const std::vector<PlanCandidate> c = {candidate("elastic", 2), candidate("elastic", 4), candidate("elastic", 8),
                                        candidate("sync", 2),    candidate("sync", 4),    candidate("sync", 8)};
  const auto why = screen_plans(
      c, {0, 1, 2, 3, 4, 5}, {screened(1000, 0), screened(995, 0), screened(985, 0), screened(1000, 0), screened(995, 0), screened(970, 0)},
      {}, "1 seed of 4 steps");
  EXPECT_EQ(why[2], "");
  EXPECT_EQ(why[5], "stopped after 1 seed of 4 steps: 970 tok/s, 3% behind sync, TP 2, colocated (1000)");
}

}  // namespace
}  // namespace april::studies
