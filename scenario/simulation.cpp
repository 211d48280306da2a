#include "scenario/simulation.hpp"

#include <chrono>

#include "sim/cost_model.hpp"
#include "sim/profiles.hpp"
#include "traces/trace_resample.hpp"
#include "traces/trace_workload.hpp"

namespace april::scenario {

std::unique_ptr<base::WorkloadSource> make_generator(const base::Config& c) {
  sim::LongTailParams p;
  p.samples_per_group = c.get_int("n_samples_per_prompt");
  p.prompt_median_tok = c.get_double("workload.prompt_median_tok");
  p.prompt_sigma = c.get_double("workload.prompt_sigma");
  p.response_median_tok = c.get_double("workload.response_median_tok");
  p.sigma_between = c.get_double("workload.sigma_between");
  p.sigma_within = c.get_double("workload.sigma_within");
  p.incorrect_len_factor = c.get_double("workload.incorrect_len_factor");
  p.drift_dip = c.get_double("workload.drift_dip");
  p.drift_dip_step = c.get_int("workload.drift_dip_step");
  p.drift_rise_per_step = c.get_double("workload.drift_rise_per_step");
  return std::make_unique<sim::LongTailGenerator>(p, static_cast<std::uint64_t>(c.get_int("seed")));
}

std::unique_ptr<adapters::SimBackend> make_sim_backend(const base::Config& c, bool record_timeline) {
  const auto hw_all = sim::builtin_hardware();
  const auto model_all = sim::builtin_models();
  const auto hw = sim::find_hardware(hw_all, c.get_string("hardware"));
  const auto model = sim::find_model(model_all, c.get_string("model"));

  adapters::SimBackendConfig bc;
  bc.engines = c.get_int("cluster.engines");
  bc.engine.max_running = c.get_int("engine.max_running");
  bc.engine.kv_capacity_tok = kv_capacity_tok(c);
  bc.engine.fast_forward = c.get_bool("engine.fast_forward");
  bc.engine.per_token_prefill = c.get_string("engine.prefill") == "per_token";
  if (c.get_string("train.time_model") == "linear") {
    const double base = c.get_double("train.linear_base_s"), per = c.get_double("train.linear_per_tok_us") * 1e-6;
    const double padded = c.get_double("train.linear_per_padded_tok_us") * 1e-6;
    bc.train_time_s = [base, per, padded](const adapters::TrainBatchShape& b) {
      return base + per * static_cast<double>(b.tokens) + padded * static_cast<double>(b.samples * b.longest_tok);
    };
  } else if (c.get_string("train.time_model") == "flops") {
    sim::TrainCostParams tp{c.get_double("train.mfu"), c.get_int("cluster.gpus"), c.get_double("train.fixed_s")};
    bc.train_time_s = [model, hw, tp](const adapters::TrainBatchShape& b) { return sim::train_time_s(model, hw, tp, b.tokens); };
  }
  bc.sync_time_s = weight_sync(c).time_s;
  bc.record_timeline = record_timeline;
  return std::make_unique<adapters::SimBackend>(std::move(bc), make_iteration_model(c));
}

Simulation::Simulation(const base::Config& c, const policies::PolicyRegistry& registry, const std::string& policy_name,
                       const RunOptions& options)
    : policy_name_(policy_name), steps_(c.get_int("steps")) {
  validate_scenario(c, options.trace ? &*options.trace : nullptr, options.trace_name);
  policy_ = registry.get(policy_name).make(c);

  if (options.trace) {
    if (c.get_string("trace.mode") == "resample") {
      workload_ = std::make_unique<traces::TraceResample>(*options.trace, options.trace_name,
                                                          static_cast<std::uint64_t>(c.get_int("seed")));
    } else {
      workload_ = std::make_unique<traces::TraceReplay>(*options.trace, options.trace_name);
    }
  } else {
    workload_ = make_generator(c);
  }

  backend_ = make_sim_backend(c, options.record_timeline);

  rl::LoopOptions lo;
  lo.batch_size = c.get_int("rollout_batch_size");
  lo.max_response_len = static_cast<std::int32_t>(c.get_int("max_response_len"));
  lo.dynamic_sampling_filter = c.get_bool("filter.dynamic_sampling");
  lo.keep_rejected_when_insufficient = c.get_bool("filter.keep_when_insufficient");
  loop_ = std::make_unique<rl::RlLoop>(*backend_, *policy_, *workload_, lo);
}

RunResult Simulation::run() {
  const auto wall0 = std::chrono::steady_clock::now();
  RunResult r;
  r.policy = policy_name_;
  r.steps.reserve(static_cast<std::size_t>(steps_));
  for (std::int64_t s = 0; s < steps_; ++s) r.steps.push_back(step());
  r.summary = rl::summarize(r.steps);
  r.summary.fingerprint = backend_->fingerprint();
  r.summary.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.events = static_cast<std::int64_t>(backend_->events_run());
  r.timeline = backend_->timeline();
  return r;
}

RunResult simulate(const base::Config& config, const policies::PolicyRegistry& registry, const std::string& policy,
                   const RunOptions& options) {
  Simulation s(config, registry, policy, options);
  return s.run();
}

}  // namespace april::scenario
