#include "policies/length_aware_policy.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace april::policies {

LengthAwarePolicy::LengthAwarePolicy(std::unique_ptr<Policy> base, LengthAwareParams p)
    : PolicyDecorator(std::move(base)), p_(p), predictor_(p.history_per_prompt) {}

Decisions LengthAwarePolicy::on_group_accepted(const RolloutView& view, GroupId group) {
  predictor_.learn(view, group);
  return PolicyDecorator::on_group_accepted(view, group);
}

Decisions LengthAwarePolicy::on_group_rejected(const RolloutView& view, GroupId group) {
  predictor_.learn(view, group);
  return PolicyDecorator::on_group_rejected(view, group);
}

SubmissionPlan LengthAwarePolicy::plan_submissions(const RolloutView& view, const std::vector<Submission>& subs) {
  // Remaining tokens predicted per submission; 0: no prediction.
  std::vector<std::int64_t> remaining = predictor_.predict_totals(view, subs);
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (remaining[i] > 0) remaining[i] -= subs[i].generated_tok;
  }
  SubmissionPlan plan;
  if (p_.order != AdmissionOrder::AsGiven) {
    plan.order.reserve(subs.size());
    for (std::size_t i = 0; i < subs.size(); ++i) plan.order.push_back(i);
    const bool long_first = p_.order == AdmissionOrder::LongFirst;
    // Stable: equal predictions keep the base's order; unpredicted go last.
    std::stable_sort(plan.order.begin(), plan.order.end(), [&](std::size_t a, std::size_t b) {
      const bool ka = remaining[a] > 0, kb = remaining[b] > 0;
      if (ka != kb) return ka;
      if (!ka) return false;
      return long_first ? remaining[a] > remaining[b] : remaining[a] < remaining[b];
    });
  }
  const bool all_predicted = std::all_of(remaining.begin(), remaining.end(), [](std::int64_t r) { return r > 0; });
  if (p_.route_by_work && all_predicted) plan.predicted_remaining_tok = std::move(remaining);
  return plan;
}

PolicyEntry length_aware_policy_entry() {
  using base::Knob;
  using base::KnobType;
  std::vector<Knob> knobs = {
      {keys::kLengthAwareBase.name, KnobType::String, std::string("april"), "",
       "the policy whose decisions this adds length-aware admission and routing to; its own keys (april.*, sync.*, async.*) apply",
       base::one_of({"sync", "april", "async"})},
      {keys::kLengthAwareOrder.name, KnobType::String, std::string("long_first"), "",
       "admission priority by predicted remaining length: long_first, short_first, or as_given",
       base::one_of({"long_first", "short_first", "as_given"})},
      {keys::kLengthAwareRoute.name, KnobType::String, std::string("work"), "",
       "simulator routing: work (least predicted tokens outstanding) or requests (fewest requests, as every other policy)",
       base::one_of({"work", "requests"})},
      {keys::kLengthAwareHistoryPerPrompt.name, KnobType::Int, std::int64_t{16}, "samples",
       "finished lengths remembered per prompt for the prediction", base::in_range(1, 1 << 20)},
  };
  return {"length_aware",
          "another policy (length_aware.base) plus admission order and routing by each sample's predicted length",
          std::move(knobs),
          [](const base::Config& c) -> std::unique_ptr<Policy> {
            std::unique_ptr<Policy> inner = make_base_policy(c.get(policies::keys::kLengthAwareBase), c);
            LengthAwareParams p;
            const std::string order = c.get(policies::keys::kLengthAwareOrder);
            p.order = order == "long_first"    ? AdmissionOrder::LongFirst
                      : order == "short_first" ? AdmissionOrder::ShortFirst
                                               : AdmissionOrder::AsGiven;
            p.route_by_work = c.get(policies::keys::kLengthAwareRoute) == "work";
            p.history_per_prompt = static_cast<std::size_t>(c.get(policies::keys::kLengthAwareHistoryPerPrompt));
            return std::make_unique<LengthAwarePolicy>(std::move(inner), p);
          },
          {"sync", "april", "async"}};
}

}  // namespace april::policies
