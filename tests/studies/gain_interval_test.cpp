// The gain error's interval over a validation's own steps (studies/gain_interval.hpp).
#include <gtest/gtest.h>

#include <numeric>

#include "studies/gain_interval.hpp"

namespace april::studies {
namespace {

std::vector<rl::StepMetrics> steps(const std::vector<double>& times_s, std::int64_t tokens = 100) {
  std::vector<rl::StepMetrics> v;
  for (const double t : times_s) {
    rl::StepMetrics m;
    m.step_time_s = t;
    m.tokens_trained = tokens;
    v.push_back(m);
  }
  return v;
}

std::vector<double> scaled(const std::vector<double>& v, const std::vector<double>& factors) {
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(v[i] * factors[i % factors.size()]);
  return out;
}

std::vector<std::size_t> all(std::size_t n) {
  std::vector<std::size_t> i(n);
  std::iota(i.begin(), i.end(), std::size_t{0});
  return i;
}

const std::vector<double> kSync{2.0, 2.2, 1.9, 2.4, 2.1, 2.0, 2.3, 1.8};
const std::vector<double> kPolicy{1.2, 1.4, 1.1, 1.5, 1.3, 1.2, 1.4, 1.1};

TEST(GainInterval, TheErrorOnAllStepsIsPredictedMinusMeasuredGainInPoints) {
  // Live: sync 100 tok / 2 s, the policy 100 tok / 1 s (gain +100%); the twin: 1.25 s (gain +60%).
  const auto e = gain_error_pp(steps({1.0}), steps({1.25}), steps({2.0}), steps({2.0}), {0});
  ASSERT_TRUE(e);
  EXPECT_NEAR(*e, -40.0, 1e-9);
  EXPECT_FALSE(gain_error_pp(steps({1.0}), steps({0.0}), steps({2.0}), steps({2.0}), {0}));
}

TEST(GainInterval, ATwinRightAtEveryStepHasNoSpread) {
  const auto ci = gain_error_interval(steps(kPolicy), steps(kPolicy), steps(kSync), steps(kSync), 1, 7);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->lo_pp, 0.0, 1e-9);
  EXPECT_NEAR(ci->hi_pp, 0.0, 1e-9);
  EXPECT_EQ(ci->resamples, 2000);
}

TEST(GainInterval, ATwinOffByTheSameFactorAtEveryStepHasNoSpreadEither) {
  // The policy's steps take 0.6x sync's, and its twin is 10% fast at every
  // step: whichever steps are drawn, the gains and the miss are the same. The
  // miss is the model's, and this run pins it down.
  const auto policy = scaled(kSync, {0.6});
  const auto sim = scaled(policy, {0.9});
  const auto ci = gain_error_interval(steps(policy), steps(sim), steps(kSync), steps(kSync), 1, 7);
  ASSERT_TRUE(ci);
  const auto point = gain_error_pp(steps(policy), steps(sim), steps(kSync), steps(kSync), all(kSync.size()));
  EXPECT_NEAR(*point, 100.0 * (1 / 0.54 - 1 / 0.6), 1e-9);
  EXPECT_NEAR(ci->lo_pp, *point, 1e-9);
  EXPECT_NEAR(ci->hi_pp, *point, 1e-9);
}

TEST(GainInterval, StepToStepNoiseWidensItAroundThePointAndTheSeedFixesIt) {
  const auto sim = scaled(kPolicy, {0.85, 1.15, 1.0, 0.9, 1.1});
  const auto a = gain_error_interval(steps(kPolicy), steps(sim), steps(kSync), steps(kSync), 1, 7);
  const auto b = gain_error_interval(steps(kPolicy), steps(sim), steps(kSync), steps(kSync), 1, 7);
  const auto c = gain_error_interval(steps(kPolicy), steps(sim), steps(kSync), steps(kSync), 1, 8);
  ASSERT_TRUE(a && b && c);
  std::vector<std::size_t> after_warmup(kSync.size() - 1);
  std::iota(after_warmup.begin(), after_warmup.end(), std::size_t{1});
  const auto point = gain_error_pp(steps(kPolicy), steps(sim), steps(kSync), steps(kSync), after_warmup);
  EXPECT_LT(a->lo_pp, *point);
  EXPECT_GT(a->hi_pp, *point);
  EXPECT_GT(a->hi_pp - a->lo_pp, 5.0);
  EXPECT_EQ(a->lo_pp, b->lo_pp);
  EXPECT_EQ(a->hi_pp, b->hi_pp);
  EXPECT_NE(a->lo_pp, c->lo_pp);
}

TEST(GainInterval, TheWarmUpStepsAreNotDrawn) {
  // A twin wrong only at step 0: left out, the interval is exactly zero.
  auto sim = kPolicy;
  sim[0] *= 3.0;
  const auto ci = gain_error_interval(steps(kPolicy), steps(sim), steps(kSync), steps(kSync), 1, 7);
  ASSERT_TRUE(ci);
  EXPECT_EQ(ci->lo_pp, 0.0);
  EXPECT_EQ(ci->hi_pp, 0.0);
}

TEST(GainInterval, TooFewStepsOrUnlikeSeriesGiveNone) {
  EXPECT_FALSE(gain_error_interval(steps({1.0, 1.0}), steps({1.0, 1.0}), steps({2.0, 2.0}), steps({2.0, 2.0}), 1, 7));
  EXPECT_FALSE(gain_error_interval(steps(kPolicy), steps({1.0}), steps(kSync), steps(kSync), 0, 7));
}

}  // namespace
}  // namespace april::studies
