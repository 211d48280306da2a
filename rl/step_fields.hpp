#pragma once
// StepMetrics' fields, listed once, with how a run's totals take each: the
// run's summary (summarize) and the steps' wire form between MPI ranks
// (studies/run_wire) both walk this list, so a new field is one line here.
#include "rl/step_metrics.hpp"

namespace april::rl {

// How summarize() takes a field over a run's steps. Own: not a total
// (absolute clock times, the step index) or computed apart (the mean reward
// and accuracy over the steps that have them; the train phases).
enum class OverSteps { Sum, Max, Last, Own };

// Calls f(name, member pointer, OverSteps) for every field, in a fixed order.
template <typename F>
constexpr void for_each_step_field(F&& f) {
  using M = StepMetrics;
  f("step", &M::step, OverSteps::Own);
  f("start_time_s", &M::start_time_s, OverSteps::Own);
  f("rollout_time_s", &M::rollout_time_s, OverSteps::Sum);
  f("train_time_s", &M::train_time_s, OverSteps::Sum);
  f("sync_time_s", &M::sync_time_s, OverSteps::Sum);
  f("step_time_s", &M::step_time_s, OverSteps::Sum);
  f("batch_ready_s", &M::batch_ready_s, OverSteps::Own);
  f("train_start_s", &M::train_start_s, OverSteps::Own);
  f("train_end_s", &M::train_end_s, OverSteps::Own);
  f("sync_end_s", &M::sync_end_s, OverSteps::Own);
  f("abort_time_s", &M::abort_time_s, OverSteps::Sum);
  f("gpus", &M::gpus, OverSteps::Last);
  f("tokens_generated", &M::tokens_generated, OverSteps::Sum);
  f("batch_response_tok", &M::batch_response_tok, OverSteps::Sum);
  f("tokens_trained", &M::tokens_trained, OverSteps::Sum);
  f("tokens_offpolicy", &M::tokens_offpolicy, OverSteps::Sum);
  f("tokens_wasted", &M::tokens_wasted, OverSteps::Sum);
  f("tokens_masked", &M::tokens_masked, OverSteps::Sum);
  f("tokens_carried", &M::tokens_carried, OverSteps::Sum);
  f("staleness_token_sum", &M::staleness_token_sum, OverSteps::Sum);
  f("staleness_max", &M::staleness_max, OverSteps::Max);
  f("busy_engine_s", &M::busy_engine_s, OverSteps::Sum);
  f("running_slot_s", &M::running_slot_s, OverSteps::Sum);
  f("trainer_lent_s", &M::trainer_lent_s, OverSteps::Sum);
  f("engines", &M::engines, OverSteps::Last);
  f("max_running", &M::max_running, OverSteps::Last);
  f("buffer_groups", &M::buffer_groups, OverSteps::Last);
  f("buffer_tokens", &M::buffer_tokens, OverSteps::Last);
  f("groups_submitted", &M::groups_submitted, OverSteps::Sum);
  f("groups_aborted", &M::groups_aborted, OverSteps::Sum);
  f("groups_rejected", &M::groups_rejected, OverSteps::Sum);
  f("samples_truncated", &M::samples_truncated, OverSteps::Sum);
  f("preemptions", &M::preemptions, OverSteps::Sum);
  f("reward_mean", &M::reward_mean, OverSteps::Own);
  f("accuracy", &M::accuracy, OverSteps::Own);
  f("train_phases", &M::train_phases, OverSteps::Own);
}

}  // namespace april::rl
