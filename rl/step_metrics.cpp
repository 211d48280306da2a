#include "rl/step_metrics.hpp"

#include <algorithm>
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
  d.trainer_lent_fraction = ratio(m.trainer_lent_s, d.total_time_s);
  d.gpu_hours = d.total_time_s * static_cast<double>(m.gpus) / 3600.0;
  d.april_offpolicy_ratio = ratio(static_cast<double>(m.tokens_carried), static_cast<double>(m.tokens_generated + m.tokens_carried));
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

}  // namespace april::rl
