#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "rl/metric_columns.hpp"
#include "rl/step_metrics.hpp"
#include "test_support.hpp"

namespace april {
namespace {

struct Case {
  std::string scenario;
  std::vector<std::string> sets;
};

// Fast-forward (one event per batch change) and per-iteration stepping must
// give identical per-step results, for every policy, on several scenarios.
TEST(FastForward, EqualsPerIterationStepping) {
  const std::vector<Case> cases = {
      {"handcheck", {"steps=6"}},
      {"handcheck", {"steps=6", "engine.max_running=3", "rollout_batch_size=3", "n_samples_per_prompt=3"}},
      {"handcheck", {"steps=6", "engine.max_running=3", "rollout_batch_size=3", "n_samples_per_prompt=3", "engine.prefill=per_token"}},
      {"default",
       {"steps=3", "max_response_len=1000", "workload.response_median_tok=200", "engine.kv_capacity_tok=60000",
        "engine.prefill=per_token"}},
      {"default", {"steps=3", "max_response_len=1500", "workload.response_median_tok=300"}},
      {"default", {"steps=3", "max_response_len=1500", "workload.response_median_tok=300", "engine.kv_capacity_tok=60000"}},
      {"default",
       {"steps=3", "max_response_len=1000", "workload.response_median_tok=200", "engine.max_running=24", "filter.dynamic_sampling=true",
        "cluster.engines=3"}},
  };
  for (const auto& c : cases) {
    for (const std::string policy : {"sync", "april", "sorted"}) {
      testing::Fixture ff(c.scenario, c.sets);
      testing::Fixture it(c.scenario, c.sets);
      it.config.apply_assignment("engine.fast_forward=false");
      scenario::RunOptions o;
      o.record_timeline = true;
      const auto a = scenario::simulate(ff.config, ff.registry, policy, o);
      const auto b = scenario::simulate(it.config, it.registry, policy, o);
      EXPECT_EQ(rl::steps_csv(a.steps), rl::steps_csv(b.steps)) << c.scenario << " " << policy;
      ASSERT_EQ(a.timeline.size(), b.timeline.size()) << c.scenario << " " << policy;
      for (std::size_t i = 0; i < a.timeline.size(); ++i) {
        ASSERT_EQ(a.timeline[i].time_ns, b.timeline[i].time_ns);
        ASSERT_EQ(a.timeline[i].engine, b.timeline[i].engine);
        ASSERT_EQ(a.timeline[i].running, b.timeline[i].running);
      }
      EXPECT_LE(a.events, b.events);
      if (c.scenario == "default") {
        EXPECT_LT(a.events * 3, b.events) << "fast-forward should save most events";
      }
    }
  }
}

// The same for the overlapping policies and every policy on a disaggregated
// cluster (engines pausing for syncs, recompute and keep_kv), and one seed
// gives the same results twice.
TEST(FastForward, EqualsPerIterationSteppingWhenTrainingOverlaps) {
  const std::vector<std::string> base = {"steps=4", "cluster.mode=disaggregated", "max_response_len=1500",
                                         "workload.response_median_tok=300"};
  const std::vector<std::vector<std::string>> extras = {{},
                                                        {"async.on_update=keep_kv", "async.eta=2"},
                                                        {"engine.kv_capacity_tok=60000", "async.max_inflight_groups=40"},
                                                        {"filter.dynamic_sampling=true", "engine.max_running=24"}};
  for (const auto& extra : extras) {
    for (const std::string policy : {"sync", "april", "sorted", "one_step_off", "async"}) {
      std::vector<std::string> sets = base;
      sets.insert(sets.end(), extra.begin(), extra.end());
      testing::Fixture ff("default", sets);
      testing::Fixture it("default", sets);
      it.config.apply_assignment("engine.fast_forward=false");
      const auto a = scenario::simulate(ff.config, ff.registry, policy);
      const auto b = scenario::simulate(it.config, it.registry, policy);
      EXPECT_EQ(rl::steps_csv(a.steps), rl::steps_csv(b.steps)) << policy << " " << fmt::format("{}", fmt::join(extra, " "));
      const auto again = scenario::simulate(ff.config, ff.registry, policy);
      EXPECT_EQ(rl::steps_csv(a.steps), rl::steps_csv(again.steps)) << policy;
      EXPECT_EQ(a.summary.fingerprint, again.summary.fingerprint) << policy;
      EXPECT_GT(a.summary.totals.tokens_trained, 0) << policy;
    }
  }
}

TEST(FastForward, TightKvCapacityPreempts) {
  testing::Fixture f("default", {"steps=3", "max_response_len=1500", "workload.response_median_tok=300", "engine.kv_capacity_tok=60000"});
  const auto r = scenario::simulate(f.config, f.registry, "april");
  EXPECT_GT(r.summary.totals.preemptions, 0);
}

}  // namespace
}  // namespace april
