#include <gtest/gtest.h>

#include <cmath>

#include "base/rng.hpp"
#include "studies/tuner.hpp"

namespace april::studies {
namespace {

// A synthetic noisy objective with a known optimum at x = 2.3, and a
// "staleness" that grows with x for the constraint test.
TuneEvaluate synthetic(std::int64_t repeats, std::int64_t* calls) {
  return [repeats, calls](const std::vector<double>& xs) {
    std::vector<std::map<std::string, double>> out;
    for (double x : xs) {
      for (std::int64_t s = 0; s < repeats; ++s) {
        base::Rng rng(static_cast<std::uint64_t>(s), "noise");
        const double noise = rng.normal(0.0, 0.05);  // common random numbers: same noise per seed
        base::Rng own(static_cast<std::uint64_t>(s) * 1000 + static_cast<std::uint64_t>(x * 1e6), "own");
        out.push_back({{"rollout_throughput_tok_s", 10.0 - (x - 2.3) * (x - 2.3) + noise + own.normal(0.0, 0.02)}, {"staleness_max", x}});
        ++*calls;
      }
    }
    return out;
  };
}

TEST(Tuner, FindsAKnownOptimumUnderNoise) {
  TuneSpec spec;
  spec.lo = 1;
  spec.hi = 4;
  spec.repeats = 4;
  spec.rounds = 6;
  spec.objective = "rollout_throughput";
  std::int64_t calls = 0;
  const auto r = tune(spec, synthetic(spec.repeats, &calls));
  ASSERT_TRUE(r.best);
  EXPECT_NEAR(r.curve[*r.best].x, 2.3, 0.1);
  EXPECT_EQ(r.runs, calls);
  EXPECT_LE(r.curve.size(), 5U + 2U * 5U);  // far fewer values than a grid at the final spacing (81)
  EXPECT_TRUE(r.binding.empty());
  EXPECT_LE(r.indistinguishable_lo, r.curve[*r.best].x);
  EXPECT_GE(r.indistinguishable_hi, r.curve[*r.best].x);
  EXPECT_GT(r.curve[*r.best].ci95, 0.0);
}

TEST(Tuner, RespectsConstraintsAndSaysWhichBinds) {
  TuneSpec spec;
  spec.lo = 1;
  spec.hi = 4;
  spec.repeats = 3;
  spec.rounds = 6;
  spec.objective = "rollout_throughput_tok_s";
  spec.constraints = {parse_constraint("staleness_max<=1.8")};
  std::int64_t calls = 0;
  const auto r = tune(spec, synthetic(spec.repeats, &calls));
  ASSERT_TRUE(r.best);
  EXPECT_LE(r.curve[*r.best].x, 1.8);
  EXPECT_GE(r.curve[*r.best].x, 1.6);
  EXPECT_EQ(r.binding, (std::vector<std::string>{"staleness_max<=1.8"}));
}

// A spec on a lattice (1: an integer key) over the synthetic objective.
TuneSpec lattice_spec(double lo, double hi, std::int64_t points, std::int64_t rounds, std::int64_t lattice) {
  TuneSpec spec;
  spec.lo = lo;
  spec.hi = hi;
  spec.points = points;
  spec.repeats = 2;
  spec.rounds = rounds;
  spec.lattice = lattice;
  spec.objective = "rollout_throughput";
  return spec;
}

std::vector<double> values_tried(const TuneResult& r) {
  std::vector<double> xs;
  for (const auto& p : r.curve) xs.push_back(p.x);
  return xs;
}

// An integer key is tuned on integers only: rounded, never repeated, and the
// refinement stops when no new integer is left (it used to try 1.5 in round 2,
// which an integer key refuses).
TEST(Tuner, IntegerKeysTryIntegersOnly) {
  TuneSpec spec = lattice_spec(1, 5, 4, 6, 1);
  EXPECT_EQ(first_round_values(spec), (std::vector<double>{1, 2, 4, 5}));  // 1, 2.33, 3.67, 5 rounded
  std::int64_t calls = 0;
  const auto r = tune(spec, synthetic(spec.repeats, &calls));
  EXPECT_EQ(values_tried(r), (std::vector<double>{1, 2, 3, 4, 5}));  // 3 added by refinement, nothing twice
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.curve[*r.best].x, 2);  // the synthetic optimum is 2.3
  spec.lo = 1.5;
  EXPECT_THROW(tune(spec, synthetic(spec.repeats, &calls)), std::invalid_argument);
}

// A key on a coarser lattice (the rollout GPUs of a split move by whole
// engines, i.e. by the tensor parallelism) is tried on lo + k x lattice only.
TEST(Tuner, LatticeKeysTryLatticePointsOnly) {
  TuneSpec spec = lattice_spec(1, 13, 3, 4, 3);
  EXPECT_EQ(first_round_values(spec), (std::vector<double>{1, 7, 13}));
  std::int64_t calls = 0;
  const auto r = tune(spec, synthetic(spec.repeats, &calls));
  EXPECT_EQ(values_tried(r), (std::vector<double>{1, 4, 7, 13}));  // 4 = 1 + 3 added by refinement; 2.5 or 3 never tried
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.curve[*r.best].x, 1);  // of the lattice points, 1 is nearest the optimum 2.3 in value (8.31 vs 7.11)
  spec.hi = 12;                      // not 1 + 3k
  EXPECT_THROW(tune(spec, synthetic(spec.repeats, &calls)), std::invalid_argument);
}

TEST(Tuner, StudentTQuantilesComeFromBoostMath) {
  EXPECT_NEAR(t975(1), 12.706, 1e-3);
  EXPECT_NEAR(t975(4), 2.776, 1e-3);
  EXPECT_NEAR(t975(30), 2.042, 1e-3);
  EXPECT_NEAR(t975(60), 2.000, 1e-3);  // the old table returned 1.96 past 30
  EXPECT_TRUE(std::isnan(t975(0)));
}

TEST(Tuner, ParsesConstraintsAndRejectsBadOnes) {
  const auto c = parse_constraint("buffer_peak_tokens<=2e6");
  EXPECT_EQ(c.metric, "buffer_peak_tokens");
  EXPECT_EQ(c.op, "<=");
  EXPECT_DOUBLE_EQ(c.limit, 2e6);
  EXPECT_TRUE(c.holds(2e6));
  EXPECT_FALSE(parse_constraint("x>3").holds(3));
  EXPECT_THROW(parse_constraint("staleness_max"), std::invalid_argument);
  EXPECT_THROW(parse_constraint("staleness_max<=four"), std::invalid_argument);
  EXPECT_THROW(resolve_metric("nope", {{"a", 1}}), std::invalid_argument);
  EXPECT_EQ(resolve_metric("rollout_throughput", {{"rollout_throughput_tok_s", 1}}), "rollout_throughput_tok_s");
}

}  // namespace
}  // namespace april::studies
