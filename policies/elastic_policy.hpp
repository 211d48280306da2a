#pragma once
// Elastic splits (verl PR #7373, "lend idle trainer GPUs to generation",
// itself adapted from PR #6556's dynamic resource scheduling): on a
// disaggregated cluster running `async`, the trainer's GPUs serve as extra
// (hybrid) engines while the trainer waits for data, and go back to it
// before it trains.
//  - Lend: when the trainer is idle with nothing to sync (the run's start,
//    each sync's end) and fewer than the threshold's groups are queued for
//    training. The router sends requests to the hybrid engines at once; they
//    start them after the switch to rollout (weights from the trainer, KV
//    cache allocated: elastic.to_rollout_s).
//  - Reclaim: once the groups queued reach the threshold, round(ratio x B)
//    clamped to [1, B]. The hybrid engines' requests go to the rollout
//    engines with their tokens and re-prefill there; the trainer is idle
//    after the switch back (elastic.to_trainer_s), and trains once B are queued.
//  - Adaptive ratio (verl's adaptive_switch_threshold): a step is idle when
//    the trainer, back from a switch or at a sync's end without one, finds
//    fewer than B groups queued (it waits for data); after
//    `release_steps` idle steps in a row the ratio rises by `step_up` (at
//    most 1), after as many calm ones it falls by `step_down` (at least
//    `min_ratio`).
// Where ours is simpler than verl's: the policy contract has no clock, so a
// step is idle when the trainer waits at all (verl: longer than its 2 s
// poll), and the trainer lends whenever the queue is short of the threshold
// (verl also weighs the wait it expects against the switches' measured
// cost). The hybrid engines run the rollout engines' layout on the trainer's
// accelerator (train.hardware), all of its GPUs.
#include <memory>

#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/policy_decorator.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct ElasticParams {
  double threshold_ratio = 1.0;  // verl switch_threshold_ratio (0.4 there: its trainer starts on a mini-batch)
  bool adaptive = true;          // verl adaptive_switch_threshold
  double step_up = 0.05, step_down = 0.03;
  std::int64_t release_steps = 2;
  double min_ratio = 0.25;
};

class ElasticPolicy final : public PolicyDecorator {
 public:
  ElasticPolicy(std::unique_ptr<Policy> base, ElasticParams p);

  Decisions on_step_start(const RolloutView& view) override;
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  Decisions on_sync_end(const RolloutView& view) override;
  [[nodiscard]] bool lends_trainer_gpus() const override { return true; }
  Decisions on_trainer_lent(const RolloutView& view) override;
  Decisions on_trainer_reclaimed(const RolloutView& view) override;

  // The ratio now, and the groups it asks for when B = batch_size.
  [[nodiscard]] double threshold_ratio() const { return ratio_; }
  [[nodiscard]] std::int64_t threshold_groups(std::int64_t batch_size) const;

 private:
  // Lends where the trainer is free and short of the threshold.
  Decisions lend_if_short(const RolloutView& view, Decisions d);
  // Reclaims where the GPUs serve and the threshold is reached.
  Decisions reclaim_if_ready(const RolloutView& view, Decisions d);
  // The trainer is free: judges the step idle or calm, adapts the ratio.
  void judge_step(const RolloutView& view);

  ElasticParams p_;
  double ratio_;
  enum class Gpus { Training, Lending, Lent, Reclaiming } gpus_ = Gpus::Training;
  std::int64_t idle_run_ = 0, calm_run_ = 0;  // steps in a row of each kind
};

PolicyEntry elastic_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::BoolKey kElasticAdaptive{"elastic.adaptive"};
inline constexpr base::DoubleKey kElasticMinRatio{"elastic.min_ratio"};
inline constexpr base::IntKey kElasticReleaseSteps{"elastic.release_steps"};
inline constexpr base::DoubleKey kElasticStepDown{"elastic.step_down"};
inline constexpr base::DoubleKey kElasticStepUp{"elastic.step_up"};
inline constexpr base::DoubleKey kElasticThresholdRatio{"elastic.threshold_ratio"};
inline constexpr base::DoubleKey kElasticToRolloutS{"elastic.to_rollout_s"};
inline constexpr base::DoubleKey kElasticToTrainerS{"elastic.to_trainer_s"};
}  // namespace keys

}  // namespace april::policies
