#include "rl/step_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "rl/step_fields.hpp"

namespace april::rl {
namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

DerivedMetrics derive(const StepMetrics& m) {
  DerivedMetrics d;
  d.total_time_s = m.step_time_s;
  d.rollout_throughput_tok_s = ratio(static_cast<double>(m.tokens_generated), m.rollout_time_s);
  d.effective_throughput_tok_s = ratio(static_cast<double>(m.tokens_trained), d.total_time_s);
  d.offpolicy_token_fraction = ratio(static_cast<double>(m.tokens_offpolicy), static_cast<double>(m.batch_response_tok));
  d.staleness_mean = ratio(m.staleness_token_sum, static_cast<double>(m.batch_response_tok));
  const double engine_s = static_cast<double>(m.engines) * m.rollout_time_s;
  d.engine_busy_fraction = ratio(m.busy_engine_s, engine_s);
  if (m.max_running > 0) d.slot_occupancy = ratio(m.running_slot_s, engine_s * static_cast<double>(m.max_running));
  d.generation_throughput_tok_s = ratio(static_cast<double>(m.tokens_generated), d.total_time_s);
  d.trainer_busy_fraction = ratio(m.train_time_s, d.total_time_s);
  d.gpu_hours = d.total_time_s * static_cast<double>(m.gpus) / 3600.0;
  d.april_offpolicy_ratio =
      ratio(static_cast<double>(m.tokens_carried), static_cast<double>(m.tokens_generated + m.tokens_carried));
  return d;
}

RunSummary summarize(const std::vector<StepMetrics>& steps) {
  RunSummary s;
  s.steps = static_cast<std::int64_t>(steps.size());
  StepMetrics& t = s.totals;
  for (const auto& m : steps) {
    for_each_step_field([&](const char*, auto member, OverSteps over) {
      using Value = std::remove_reference_t<decltype(t.*member)>;
      if constexpr (std::is_arithmetic_v<Value>) {
        if (over == OverSteps::Sum) t.*member += m.*member;
        if (over == OverSteps::Max) t.*member = std::max(t.*member, m.*member);
        if (over == OverSteps::Last) t.*member = m.*member;
      }
    });
    s.april_offpolicy_ratio += derive(m).april_offpolicy_ratio;
    s.buffer_peak_groups = std::max(s.buffer_peak_groups, m.buffer_groups);
    s.buffer_peak_tokens = std::max(s.buffer_peak_tokens, m.buffer_tokens);
  }
  if (!steps.empty()) {
    s.tokens_buffered_at_end = steps.back().buffer_tokens;
    s.april_offpolicy_ratio /= static_cast<double>(steps.size());
  }
  double rsum = 0, asum = 0;
  std::int64_t rn = 0;
  for (const auto& m : steps) {
    if (m.reward_mean && m.accuracy) {
      rsum += *m.reward_mean;
      asum += *m.accuracy;
      ++rn;
    }
  }
  if (rn > 0) {
    t.reward_mean = rsum / static_cast<double>(rn);
    t.accuracy = asum / static_cast<double>(rn);
  }
  return s;
}

nlohmann::json summary_json(const RunSummary& s) {
  const StepMetrics& t = s.totals;
  const DerivedMetrics d = derive(t);
  nlohmann::json j;
  j["steps"] = s.steps;
  j["rollout_time_s"] = t.rollout_time_s;
  j["train_time_s"] = t.train_time_s;
  j["sync_time_s"] = t.sync_time_s;
  j["abort_time_s"] = t.abort_time_s;
  j["total_time_s"] = d.total_time_s;
  j["step_time_s"] = s.steps > 0 ? d.total_time_s / static_cast<double>(s.steps) : 0.0;
  j["gpu_hours"] = d.gpu_hours;
  j["trainer_busy_fraction"] = d.trainer_busy_fraction;
  j["generation_throughput_tok_s"] = d.generation_throughput_tok_s;
  j["tokens_generated"] = t.tokens_generated;
  j["rollout_throughput_tok_s"] = d.rollout_throughput_tok_s;
  j["effective_throughput_tok_s"] = d.effective_throughput_tok_s;
  j["tokens_trained"] = t.tokens_trained;
  j["offpolicy_token_fraction"] = d.offpolicy_token_fraction;
  j["tokens_carried"] = t.tokens_carried;
  j["april_offpolicy_ratio"] = s.april_offpolicy_ratio;
  j["staleness_mean"] = d.staleness_mean;
  j["staleness_max"] = t.staleness_max;
  j["tokens_wasted"] = t.tokens_wasted;
  j["tokens_masked"] = t.tokens_masked;
  j["tokens_buffered_at_end"] = s.tokens_buffered_at_end;
  j["engine_busy_fraction"] = d.engine_busy_fraction;
  j["slot_occupancy"] = d.slot_occupancy >= 0 ? nlohmann::json(d.slot_occupancy) : nlohmann::json(nullptr);
  j["buffer_peak_groups"] = s.buffer_peak_groups;
  j["buffer_peak_tokens"] = s.buffer_peak_tokens;
  j["groups_submitted"] = t.groups_submitted;
  j["groups_aborted"] = t.groups_aborted;
  j["groups_rejected"] = t.groups_rejected;
  j["samples_truncated"] = t.samples_truncated;
  j["preemptions"] = t.preemptions;
  j["event_fingerprint"] = fmt::format("{:016x}", s.fingerprint);
  if (t.reward_mean) j["reward_mean"] = *t.reward_mean;  // mean over steps
  if (t.accuracy) j["accuracy"] = *t.accuracy;
  return j;
}

const std::vector<StepColumn>& step_columns() {
  using M = StepMetrics;
  using D = DerivedMetrics;
  auto i = [](std::int64_t v) { return std::optional<double>(static_cast<double>(v)); };
  auto phase = [](double TrainPhases::*field) {
    return [field](const M& m, const D&) { return m.train_phases ? std::optional<double>((*m.train_phases).*field) : std::nullopt; };
  };
  static const std::vector<StepColumn> columns = {
      {"step", true, [i](const M& m, const D&) { return i(m.step); }},
      {"start_time_s", false, [](const M& m, const D&) { return std::optional<double>(m.start_time_s); }},
      {"rollout_time_s", false, [](const M& m, const D&) { return std::optional<double>(m.rollout_time_s); }},
      {"train_time_s", false, [](const M& m, const D&) { return std::optional<double>(m.train_time_s); }},
      {"sync_time_s", false, [](const M& m, const D&) { return std::optional<double>(m.sync_time_s); }},
      {"total_time_s", false, [](const M&, const D& d) { return std::optional<double>(d.total_time_s); }},
      {"tokens_generated", true, [i](const M& m, const D&) { return i(m.tokens_generated); }},
      {"rollout_throughput_tok_s", false, [](const M&, const D& d) { return std::optional<double>(d.rollout_throughput_tok_s); }},
      {"effective_throughput_tok_s", false, [](const M&, const D& d) { return std::optional<double>(d.effective_throughput_tok_s); }},
      {"tokens_trained", true, [i](const M& m, const D&) { return i(m.tokens_trained); }},
      {"offpolicy_token_fraction", false, [](const M&, const D& d) { return std::optional<double>(d.offpolicy_token_fraction); }},
      {"staleness_mean", false, [](const M&, const D& d) { return std::optional<double>(d.staleness_mean); }},
      {"staleness_max", true, [i](const M& m, const D&) { return i(m.staleness_max); }},
      {"tokens_wasted", true, [i](const M& m, const D&) { return i(m.tokens_wasted); }},
      {"engine_busy_fraction", false, [](const M&, const D& d) { return std::optional<double>(d.engine_busy_fraction); }},
      {"slot_occupancy", false,
       [](const M&, const D& d) { return d.slot_occupancy >= 0 ? std::optional<double>(d.slot_occupancy) : std::nullopt; }},
      {"buffer_groups", true, [i](const M& m, const D&) { return i(m.buffer_groups); }},
      {"buffer_tokens", true, [i](const M& m, const D&) { return i(m.buffer_tokens); }},
      {"groups_submitted", true, [i](const M& m, const D&) { return i(m.groups_submitted); }},
      {"groups_aborted", true, [i](const M& m, const D&) { return i(m.groups_aborted); }},
      {"groups_rejected", true, [i](const M& m, const D&) { return i(m.groups_rejected); }},
      {"samples_truncated", true, [i](const M& m, const D&) { return i(m.samples_truncated); }},
      {"preemptions", true, [i](const M& m, const D&) { return i(m.preemptions); }},
      {"reward_mean", false, [](const M& m, const D&) { return m.reward_mean; }},
      {"accuracy", false, [](const M& m, const D&) { return m.accuracy; }},
      // Section 3b's absolute times; appended, so that older databases gain them by ALTER TABLE.
      {"batch_ready_s", false, [](const M& m, const D&) { return std::optional<double>(m.batch_ready_s); }},
      {"train_start_s", false, [](const M& m, const D&) { return std::optional<double>(m.train_start_s); }},
      {"train_end_s", false, [](const M& m, const D&) { return std::optional<double>(m.train_end_s); }},
      {"sync_end_s", false, [](const M& m, const D&) { return std::optional<double>(m.sync_end_s); }},
      // Section 3's april_offpolicy_ratio and its numerator; appended likewise.
      {"tokens_carried", true, [i](const M& m, const D&) { return i(m.tokens_carried); }},
      {"april_offpolicy_ratio", false, [](const M&, const D& d) { return std::optional<double>(d.april_offpolicy_ratio); }},
      // The abort's share of rollout_time_s (schema 5); appended likewise.
      {"abort_time_s", false, [](const M& m, const D&) { return std::optional<double>(m.abort_time_s); }},
      // Masked batch tokens, apart from wasted ones (schema 6); appended likewise.
      {"tokens_masked", true, [i](const M& m, const D&) { return i(m.tokens_masked); }},
      // The train step's modelled phases (schema 7); empty for live runs. Appended likewise.
      {"train_old_logprob_s", false, phase(&TrainPhases::old_logprob_s)},
      {"train_ref_logprob_s", false, phase(&TrainPhases::ref_logprob_s)},
      {"train_update_s", false, phase(&TrainPhases::update_s)},
      {"train_grad_reduce_s", false, phase(&TrainPhases::grad_reduce_s)},
      {"train_optimizer_s", false, phase(&TrainPhases::optimizer_s)},
      {"train_offload_s", false, phase(&TrainPhases::offload_s)},
      {"train_other_s", false, phase(&TrainPhases::other_s)},
  };
  return columns;
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
      const auto v = cols[c].value(m, d);
      if (!v) continue;
      out += cols[c].integer ? fmt::format("{}", static_cast<std::int64_t>(*v)) : fmt::format("{:.9g}", *v);
    }
    out += '\n';
  }
  return out;
}

}  // namespace april::rl
