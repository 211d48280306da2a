// The wire form that carries runs between MPI ranks (studies/run_wire.hpp):
// what a worker sends is what rank 0 stores, bit for bit, and a spec rebuilt
// on a worker is the same run (same key, same results) as the sender's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "rl/metric_columns.hpp"
#include "rl/step_metrics.hpp"
#include "studies/run_batch.hpp"
#include "studies/run_wire.hpp"
#include "test_support.hpp"

namespace april {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every field set, each to its own value; doubles that decimal text would round.
rl::StepMetrics every_field(std::int64_t k) {
  rl::StepMetrics m;
  double d = 0.1 + static_cast<double>(k) / 3.0;
  std::int64_t i = 1000 * k + 1;
  auto next_d = [&] { return d *= 1.0000001; };
  auto next_i = [&] { return ++i; };
  m.step = next_i();
  m.start_time_s = next_d();
  m.rollout_time_s = next_d();
  m.train_time_s = next_d();
  m.sync_time_s = next_d();
  m.step_time_s = next_d();
  m.batch_ready_s = next_d();
  m.train_start_s = next_d();
  m.train_end_s = next_d();
  m.sync_end_s = next_d();
  m.abort_time_s = next_d();
  m.gpus = next_i();
  m.tokens_generated = next_i();
  m.batch_response_tok = next_i();
  m.tokens_trained = next_i();
  m.tokens_offpolicy = next_i();
  m.tokens_wasted = next_i();
  m.tokens_masked = next_i();
  m.tokens_carried = next_i();
  m.staleness_token_sum = next_d();
  m.staleness_max = next_i();
  m.busy_engine_s = next_d();
  m.running_slot_s = next_d();
  m.trainer_lent_s = next_d();
  m.engines = next_i();
  m.max_running = next_i();
  m.buffer_groups = next_i();
  m.buffer_tokens = next_i();
  m.groups_submitted = next_i();
  m.groups_aborted = next_i();
  m.groups_rejected = next_i();
  m.samples_truncated = next_i();
  m.preemptions = next_i();
  if (k % 2 == 0) m.reward_mean = next_d();
  if (k % 3 == 0) m.accuracy = next_d();
  if (k % 2 == 1) m.train_phases = rl::TrainPhases{next_d(), next_d(), next_d(), next_d(), next_d(), next_d(), next_d()};
  return m;
}

void expect_same(const rl::StepMetrics& a, const rl::StepMetrics& b) {
#define APRIL_SAME_INT(f) EXPECT_EQ(a.f, b.f) << #f
#define APRIL_SAME_DBL(f) EXPECT_TRUE(same_bits(a.f, b.f)) << #f << ": " << a.f << " vs " << b.f
  APRIL_SAME_INT(step);
  APRIL_SAME_DBL(start_time_s);
  APRIL_SAME_DBL(rollout_time_s);
  APRIL_SAME_DBL(train_time_s);
  APRIL_SAME_DBL(sync_time_s);
  APRIL_SAME_DBL(step_time_s);
  APRIL_SAME_DBL(batch_ready_s);
  APRIL_SAME_DBL(train_start_s);
  APRIL_SAME_DBL(train_end_s);
  APRIL_SAME_DBL(sync_end_s);
  APRIL_SAME_DBL(abort_time_s);
  APRIL_SAME_INT(gpus);
  APRIL_SAME_INT(tokens_generated);
  APRIL_SAME_INT(batch_response_tok);
  APRIL_SAME_INT(tokens_trained);
  APRIL_SAME_INT(tokens_offpolicy);
  APRIL_SAME_INT(tokens_wasted);
  APRIL_SAME_INT(tokens_masked);
  APRIL_SAME_INT(tokens_carried);
  APRIL_SAME_DBL(staleness_token_sum);
  APRIL_SAME_INT(staleness_max);
  APRIL_SAME_DBL(busy_engine_s);
  APRIL_SAME_DBL(running_slot_s);
  APRIL_SAME_DBL(trainer_lent_s);
  APRIL_SAME_INT(engines);
  APRIL_SAME_INT(max_running);
  APRIL_SAME_INT(buffer_groups);
  APRIL_SAME_INT(buffer_tokens);
  APRIL_SAME_INT(groups_submitted);
  APRIL_SAME_INT(groups_aborted);
  APRIL_SAME_INT(groups_rejected);
  APRIL_SAME_INT(samples_truncated);
  APRIL_SAME_INT(preemptions);
#undef APRIL_SAME_INT
#undef APRIL_SAME_DBL
  ASSERT_EQ(a.reward_mean.has_value(), b.reward_mean.has_value());
  if (a.reward_mean) {
    EXPECT_TRUE(same_bits(*a.reward_mean, *b.reward_mean));
  }
  ASSERT_EQ(a.accuracy.has_value(), b.accuracy.has_value());
  if (a.accuracy) {
    EXPECT_TRUE(same_bits(*a.accuracy, *b.accuracy));
  }
  ASSERT_EQ(a.train_phases.has_value(), b.train_phases.has_value());
  if (a.train_phases) {
    EXPECT_TRUE(same_bits(a.train_phases->old_logprob_s, b.train_phases->old_logprob_s));
    EXPECT_TRUE(same_bits(a.train_phases->update_s, b.train_phases->update_s));
    EXPECT_TRUE(same_bits(a.train_phases->other_s, b.train_phases->other_s));
  }
}

studies::RunRecord record_with(std::vector<rl::StepMetrics> steps) {
  studies::RunRecord r;
  r.run_key = "k";
  r.scenario_hash = "h";
  r.scenario = {{"seed", 3}, {"april.alpha", 1.0 / 3.0}};
  r.policy = "april";
  r.seed = 3;
  r.started_at = "2026-11-22T10:00:00Z";
  r.finished_at = "2026-11-22T10:00:01Z";
  r.wall_time_s = 0.123456789012345;
  r.model_version = 3;
  r.summary = {{"step_time_s", 62.28000000000001}, {"slot_occupancy", nullptr}};
  r.steps = std::move(steps);
  return r;
}

TEST(RunWire, EveryStepFieldMakesTheRoundTripBitForBit) {
  std::vector<rl::StepMetrics> steps;
  for (std::int64_t k = 0; k < 7; ++k) steps.push_back(every_field(k));
  steps[1].staleness_token_sum = std::numeric_limits<double>::quiet_NaN();
  steps[2].busy_engine_s = std::numeric_limits<double>::infinity();
  steps[3].reward_mean = -0.0;
  const auto sent = record_with(steps);
  const auto got = studies::record_from_wire(studies::record_to_wire(41, sent));
  EXPECT_EQ(got.index, 41);
  const auto& r = got.record;
  EXPECT_EQ(r.run_key, sent.run_key);
  EXPECT_EQ(r.scenario, sent.scenario);
  EXPECT_EQ(r.summary, sent.summary);
  EXPECT_TRUE(same_bits(r.wall_time_s, sent.wall_time_s));
  EXPECT_EQ(r.started_at, sent.started_at);
  EXPECT_EQ(r.model_version, 3);
  EXPECT_EQ(r.status, "done");
  ASSERT_EQ(r.steps.size(), steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) expect_same(steps[k], r.steps[k]);
}

TEST(RunWire, ARealRunArrivesAsItWasSimulated) {
  testing::Fixture f("default", {"steps=12"});
  const studies::RunContext context{&f.registry, std::nullopt, "", studies::trace_hash(std::nullopt)};
  const auto rec = studies::simulate_run({{}, "april", f.config}, context);
  ASSERT_EQ(rec.status, "done") << rec.error;
  const auto got = studies::record_from_wire(studies::record_to_wire(0, rec)).record;
  EXPECT_EQ(got.summary, rec.summary);
  EXPECT_EQ(rl::steps_csv(got.steps), rl::steps_csv(rec.steps));
  for (std::size_t k = 0; k < rec.steps.size(); ++k) expect_same(rec.steps[k], got.steps[k]);
}

TEST(RunWire, ASpecRebuiltOnAWorkerIsTheSameRun) {
  // Disaggregated: cluster.engines follows from the split and must stay unset
  // on the worker (resolved() would pin it to its default and fail the run).
  testing::Fixture f("default", {"cluster.mode=disaggregated", "cluster.train_gpus=2", "steps=6", "april.alpha=1.3333333333333333"});
  const studies::RunSpec spec{{{"design", "6+2"}}, "one_step_off", f.config};
  const auto got = studies::spec_from_wire(studies::spec_to_wire(5, spec), f.schema);
  EXPECT_EQ(got.index, 5);
  EXPECT_EQ(got.spec.policy, "one_step_off");
  EXPECT_EQ(got.spec.params, spec.params);
  EXPECT_FALSE(got.spec.config.is_set("cluster.engines"));
  const std::string th = studies::trace_hash(std::nullopt);
  EXPECT_EQ(studies::run_key(got.spec.config, got.spec.policy, th), studies::run_key(spec.config, spec.policy, th));
  const studies::RunContext context{&f.registry, std::nullopt, "", th};
  const auto here = studies::simulate_run(spec, context);
  const auto there = studies::simulate_run(got.spec, context);
  ASSERT_EQ(here.status, "done") << here.error;
  EXPECT_EQ(there.summary, here.summary);
}

TEST(RunWire, DamagedMessagesAreClearErrors) {
  const std::string good = studies::record_to_wire(1, record_with({every_field(0), every_field(1)}));
  auto error_of = [](const std::string& text) {
    try {
      (void)studies::record_from_wire(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(good.substr(0, good.size() - 3)).find("2 steps need"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, good.find('\0'))).find("without its steps"), std::string::npos);
  EXPECT_NE(error_of(std::string("{\"index\": 1}") + '\0').find("'run_key' is missing"), std::string::npos);
  EXPECT_NE(error_of(std::string("{not json") + '\0').find("not JSON"), std::string::npos);
  testing::Fixture f;
  EXPECT_THROW((void)studies::spec_from_wire(R"({"index": 0, "params": {}, "policy": "april", "config": {"april.alpha": "x"}})", f.schema),
               std::exception);
}

}  // namespace
}  // namespace april
