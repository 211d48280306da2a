#include "rl/metric_columns.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <type_traits>

namespace april::rl {
namespace {

using M = StepMetrics;
using D = DerivedMetrics;
using Value = std::optional<double>;

// A StepMetrics or DerivedMetrics member as a column's reader.
template <typename T>
auto of_step(T M::*field) {
  return [field](const M& m, const D&, const RunSummary*) { return Value(static_cast<double>(m.*field)); };
}
auto of_derived(double D::*field) {
  return [field](const M&, const D& d, const RunSummary*) { return Value(d.*field); };
}
auto of_optional(std::optional<double> M::*field) {
  return [field](const M& m, const D&, const RunSummary*) { return m.*field; };
}
auto of_phase(double TrainPhases::*field) {
  return [field](const M& m, const D&, const RunSummary*) { return m.train_phases ? Value((*m.train_phases).*field) : std::nullopt; };
}
// A whole-run value: summary only.
template <typename T>
auto of_run(T RunSummary::*field) {
  return [field](const M&, const D&, const RunSummary* run) { return run ? Value(static_cast<double>(run->*field)) : std::nullopt; };
}

std::vector<MetricColumn> make_table() {
  constexpr unsigned kStep = kPerStep, kSum = kInSummary;
  return {
      {"step", true, kStep, of_step(&M::step)},
      {"start_time_s", false, kStep, of_step(&M::start_time_s)},
      {"rollout_time_s", false, kBoth, of_step(&M::rollout_time_s)},
      {"train_time_s", false, kBoth, of_step(&M::train_time_s)},
      {"sync_time_s", false, kBoth, of_step(&M::sync_time_s)},
      {"total_time_s", false, kBoth, of_derived(&D::total_time_s)},
      {"tokens_generated", true, kBoth, of_step(&M::tokens_generated)},
      {"rollout_throughput_tok_s", false, kBoth, of_derived(&D::rollout_throughput_tok_s)},
      {"effective_throughput_tok_s", false, kBoth, of_derived(&D::effective_throughput_tok_s)},
      {"tokens_trained", true, kBoth, of_step(&M::tokens_trained)},
      {"offpolicy_token_fraction", false, kBoth, of_derived(&D::offpolicy_token_fraction)},
      {"staleness_mean", false, kBoth, of_derived(&D::staleness_mean)},
      {"staleness_max", true, kBoth, of_step(&M::staleness_max)},
      {"tokens_wasted", true, kBoth, of_step(&M::tokens_wasted)},
      {"engine_busy_fraction", false, kBoth, of_derived(&D::engine_busy_fraction)},
      {"slot_occupancy", false, kBoth,
       [](const M&, const D& d, const RunSummary*) { return d.slot_occupancy >= 0 ? Value(d.slot_occupancy) : std::nullopt; }, true},
      {"buffer_groups", true, kStep, of_step(&M::buffer_groups)},
      {"buffer_tokens", true, kStep, of_step(&M::buffer_tokens)},
      {"groups_submitted", true, kBoth, of_step(&M::groups_submitted)},
      {"groups_aborted", true, kBoth, of_step(&M::groups_aborted)},
      {"groups_rejected", true, kBoth, of_step(&M::groups_rejected)},
      {"samples_truncated", true, kBoth, of_step(&M::samples_truncated)},
      {"preemptions", true, kBoth, of_step(&M::preemptions)},
      // Live runs only; over a run, the mean over the steps that have them.
      {"reward_mean", false, kBoth, of_optional(&M::reward_mean)},
      {"accuracy", false, kBoth, of_optional(&M::accuracy)},
      // Section 3b's absolute times; appended, so that older databases gain them by ALTER TABLE.
      {"batch_ready_s", false, kStep, of_step(&M::batch_ready_s)},
      {"train_start_s", false, kStep, of_step(&M::train_start_s)},
      {"train_end_s", false, kStep, of_step(&M::train_end_s)},
      {"sync_end_s", false, kStep, of_step(&M::sync_end_s)},
      // Section 3's april_offpolicy_ratio and its numerator; appended likewise.
      // Over a run, the mean of the steps' ratios (RunSummary), as the APRIL
      // reference implementation logs it.
      {"tokens_carried", true, kBoth, of_step(&M::tokens_carried)},
      {"april_offpolicy_ratio", false, kBoth,
       [](const M&, const D& d, const RunSummary* run) { return Value(run ? run->april_offpolicy_ratio : d.april_offpolicy_ratio); }},
      // The abort's share of rollout_time_s (schema 5); appended likewise.
      {"abort_time_s", false, kBoth, of_step(&M::abort_time_s)},
      // Masked batch tokens, apart from wasted ones (schema 6); appended likewise.
      {"tokens_masked", true, kBoth, of_step(&M::tokens_masked)},
      // The train step's modelled phases (schema 7); empty for live runs. Appended likewise.
      {"train_old_logprob_s", false, kStep, of_phase(&TrainPhases::old_logprob_s)},
      {"train_ref_logprob_s", false, kStep, of_phase(&TrainPhases::ref_logprob_s)},
      {"train_update_s", false, kStep, of_phase(&TrainPhases::update_s)},
      {"train_grad_reduce_s", false, kStep, of_phase(&TrainPhases::grad_reduce_s)},
      {"train_optimizer_s", false, kStep, of_phase(&TrainPhases::optimizer_s)},
      {"train_offload_s", false, kStep, of_phase(&TrainPhases::offload_s)},
      {"train_other_s", false, kStep, of_phase(&TrainPhases::other_s)},
      // Elastic splits' lent time (schema 8); appended likewise.
      {"trainer_lent_s", false, kBoth, of_step(&M::trainer_lent_s)},
      {"trainer_lent_fraction", false, kBoth, of_derived(&D::trainer_lent_fraction)},
      // The whole run's, in summary.json only.
      {"steps", true, kSum, of_run(&RunSummary::steps)},
      {"step_time_s", false, kSum,
       [](const M&, const D& d, const RunSummary* run) {
         return Value(run && run->steps > 0 ? d.total_time_s / static_cast<double>(run->steps) : 0.0);
       }},
      {"gpu_hours", false, kSum, of_derived(&D::gpu_hours)},
      {"trainer_busy_fraction", false, kSum, of_derived(&D::trainer_busy_fraction)},
      {"generation_throughput_tok_s", false, kSum, of_derived(&D::generation_throughput_tok_s)},
      {"tokens_buffered_at_end", true, kSum, of_run(&RunSummary::tokens_buffered_at_end)},
      {"buffer_peak_groups", true, kSum, of_run(&RunSummary::buffer_peak_groups)},
      {"buffer_peak_tokens", true, kSum, of_run(&RunSummary::buffer_peak_tokens)},
  };
}

}  // namespace

const std::vector<MetricColumn>& metric_columns() {
  static const std::vector<MetricColumn> table = make_table();
  return table;
}

const std::vector<MetricColumn>& step_columns() {
  static const std::vector<MetricColumn> columns = [] {
    std::vector<MetricColumn> out;
    for (const auto& c : metric_columns()) {
      if ((c.where & kPerStep) != 0) out.push_back(c);
    }
    return out;
  }();
  return columns;
}

nlohmann::json summary_json(const RunSummary& s) {
  const DerivedMetrics d = derive(s.totals);
  nlohmann::json j = nlohmann::json::object();
  for (const auto& c : metric_columns()) {
    if ((c.where & kInSummary) == 0) continue;
    const auto v = c.value(s.totals, d, &s);
    if (!v) {
      if (c.null_in_summary) j[c.name] = nullptr;
      continue;
    }
    if (c.integer) {
      j[c.name] = static_cast<std::int64_t>(*v);
    } else {
      j[c.name] = *v;
    }
  }
  j["event_fingerprint"] = fmt::format("{:016x}", s.fingerprint);
  return j;
}

std::string steps_csv(const std::vector<StepMetrics>& steps) {
  const auto& cols = step_columns();
  std::string out;
  for (std::size_t c = 0; c < cols.size(); ++c) out += fmt::format("{}{}", c ? "," : "", cols[c].name);
  out += '\n';
  for (const auto& m : steps) {
    const DerivedMetrics d = derive(m);
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (c) out += ',';
      const auto v = cols[c].value(m, d, nullptr);
      if (!v) continue;
      out += cols[c].integer ? fmt::format("{}", static_cast<std::int64_t>(*v)) : fmt::format("{:.9g}", *v);
    }
    out += '\n';
  }
  return out;
}

}  // namespace april::rl
