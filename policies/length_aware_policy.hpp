#pragma once
// Length-aware scheduling on top of another policy (`length_aware.base`:
// sync, april or async), from observable signals only. The base decides what
// to submit, when to train and what to batch; this adds two decisions, both
// driven by a LengthPredictor (policies/length_predictor.hpp) that learns
// each prompt's lengths as its groups complete:
//  - admission priority (`length_aware.order`): the samples submitted at one
//    instant are submitted longest predicted remaining first (`long_first`,
//    to start the tail early), shortest first (`short_first`, to complete
//    groups early) or as the base gave them (`as_given`). Engines admit in
//    submission order, so this is the order in which queued samples start.
//    Samples with no prediction (nothing observed yet) keep their order and
//    go after the predicted ones.
//  - routing (`length_aware.route=work`): each sample carries its predicted
//    remaining tokens, and the simulator's router sends it to the engine with
//    the least predicted work outstanding instead of the fewest requests.
//    Only when every sample of the instant has a prediction; a live backend
//    with one engine has nothing to route.
// The predictor's history lives in the policy object: a resumed checkpoint
// starts it empty.
#include <cstddef>
#include <memory>

#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/policy_decorator.hpp"
#include "policies/registry.hpp"
#include "policies/view_length_predictor.hpp"

namespace april::policies {

enum class AdmissionOrder { AsGiven, LongFirst, ShortFirst };

struct LengthAwareParams {
  AdmissionOrder order = AdmissionOrder::LongFirst;
  bool route_by_work = true;
  std::size_t history_per_prompt = 16;
};

class LengthAwarePolicy final : public PolicyDecorator {
 public:
  LengthAwarePolicy(std::unique_ptr<Policy> base, LengthAwareParams p);

  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  SubmissionPlan plan_submissions(const RolloutView& view, const std::vector<Submission>& submissions) override;

  [[nodiscard]] const LengthPredictor& predictor() const { return predictor_.predictor(); }

 private:
  LengthAwareParams p_;
  ViewLengthPredictor predictor_;
};

PolicyEntry length_aware_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::StringKey kLengthAwareBase{"length_aware.base"};
inline constexpr base::IntKey kLengthAwareHistoryPerPrompt{"length_aware.history_per_prompt"};
inline constexpr base::StringKey kLengthAwareOrder{"length_aware.order"};
inline constexpr base::StringKey kLengthAwareRoute{"length_aware.route"};
}  // namespace keys

}  // namespace april::policies
