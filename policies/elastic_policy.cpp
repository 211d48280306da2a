#include "policies/elastic_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "policies/async_policy.hpp"

namespace april::policies {

namespace {

std::int64_t queued_groups(const RolloutView& view) { return static_cast<std::int64_t>(view.accepted_groups().size()); }

}  // namespace

ElasticPolicy::ElasticPolicy(std::unique_ptr<Policy> base, ElasticParams p)
    : PolicyDecorator(std::move(base)), p_(p), ratio_(p.threshold_ratio) {
  if (!PolicyDecorator::overlaps() || PolicyDecorator::publishes_to_relays()) {
    throw std::invalid_argument("elastic lends the trainer's GPUs under a policy that overlaps rollout and training (async)");
  }
  if (p_.threshold_ratio <= 0 || p_.threshold_ratio > 1 || p_.min_ratio <= 0 || p_.min_ratio > 1 || p_.release_steps < 1) {
    throw std::invalid_argument("elastic: threshold and min ratios in (0, 1], release_steps >= 1");
  }
}

std::int64_t ElasticPolicy::threshold_groups(std::int64_t batch_size) const {
  return std::clamp<std::int64_t>(std::llround(ratio_ * static_cast<double>(batch_size)), 1, batch_size);
}

Decisions ElasticPolicy::lend_if_short(const RolloutView& view, Decisions d) {
  if (gpus_ == Gpus::Training && !d.train && view.trainer_idle() && view.trained_steps() == view.step() &&
      queued_groups(view) < threshold_groups(view.batch_size())) {
    d.lend_trainer = true;
    gpus_ = Gpus::Lending;
  }
  return d;
}

Decisions ElasticPolicy::reclaim_if_ready(const RolloutView& view, Decisions d) {
  if (gpus_ == Gpus::Lent && queued_groups(view) >= threshold_groups(view.batch_size())) {
    d.reclaim_trainer = true;
    gpus_ = Gpus::Reclaiming;
  }
  return d;
}

void ElasticPolicy::judge_step(const RolloutView& view) {
  if (!p_.adaptive) return;
  // The trainer is free now: with fewer than B queued it waits for data.
  if (queued_groups(view) < view.batch_size()) {
    calm_run_ = 0;
    if (++idle_run_ >= p_.release_steps) {
      ratio_ = std::min(1.0, ratio_ + p_.step_up);
      idle_run_ = 0;
    }
  } else {
    idle_run_ = 0;
    if (++calm_run_ >= p_.release_steps) {
      ratio_ = std::max(p_.min_ratio, ratio_ - p_.step_down);
      calm_run_ = 0;
    }
  }
}

Decisions ElasticPolicy::on_step_start(const RolloutView& view) { return lend_if_short(view, PolicyDecorator::on_step_start(view)); }

Decisions ElasticPolicy::on_group_accepted(const RolloutView& view, GroupId group) {
  return reclaim_if_ready(view, PolicyDecorator::on_group_accepted(view, group));
}

Decisions ElasticPolicy::on_group_rejected(const RolloutView& view, GroupId group) {
  return reclaim_if_ready(view, PolicyDecorator::on_group_rejected(view, group));
}

Decisions ElasticPolicy::on_sync_end(const RolloutView& view) {
  Decisions d = lend_if_short(view, PolicyDecorator::on_sync_end(view));
  // A step with no lend is judged now; one with a lend when the GPUs are back.
  if (!d.lend_trainer) judge_step(view);
  return d;
}

Decisions ElasticPolicy::on_trainer_lent(const RolloutView& view) {
  if (gpus_ != Gpus::Lending) throw std::logic_error("elastic: lent GPUs reported while none were being lent");
  gpus_ = Gpus::Lent;
  return reclaim_if_ready(view, PolicyDecorator::on_trainer_lent(view));
}

Decisions ElasticPolicy::on_trainer_reclaimed(const RolloutView& view) {
  if (gpus_ != Gpus::Reclaiming) throw std::logic_error("elastic: reclaimed GPUs reported while none were being reclaimed");
  gpus_ = Gpus::Training;
  judge_step(view);
  return PolicyDecorator::on_trainer_reclaimed(view);
}

PolicyEntry elastic_policy_entry() {
  using base::Knob;
  using base::KnobType;
  // Defaults: verl's HybridRolloutSwitchConfig (PR #7373: step_up 0.05,
  // step_down 0.03, release_steps 2, adaptive on); the floor is verl's
  // 1 / parameter_sync_step with the 4 of the PR's published run. verl's
  // first ratio, 0.4, counts toward a trainer that starts on its first
  // mini-batch (4 local updates per sync there); april's trainer takes the
  // whole batch at once, so its ratio starts at 1 and the rule lowers it
  // while the trainer finds its batch ready.
  std::vector<Knob> knobs = {
      {keys::kElasticThresholdRatio.name, KnobType::Double, 1.0, "",
       "take the trainer's GPUs back once round(ratio x B) groups are queued for training (verl switch_threshold_ratio, "
       "whose 0.4 is for a trainer that starts on a mini-batch); the first step's ratio when adaptive",
       base::in_range(0.01, 1.0)},
      {keys::kElasticAdaptive.name,
       KnobType::Bool,
       true,
       "",
       "adapt the ratio: up after release_steps steps in a row in which the trainer waited for data, down after as many in "
       "which it did not (verl adaptive_switch_threshold)",
       {}},
      {keys::kElasticStepUp.name, KnobType::Double, 0.05, "", "the ratio's rise after idle steps (verl switch_threshold_step_up)",
       base::in_range(0.0, 1.0)},
      {keys::kElasticStepDown.name, KnobType::Double, 0.03, "", "the ratio's fall after calm steps (verl switch_threshold_step_down)",
       base::in_range(0.0, 1.0)},
      {keys::kElasticReleaseSteps.name, KnobType::Int, std::int64_t{2}, "steps",
       "steps in a row of one kind before the ratio moves (verl switch_threshold_release_steps)", base::in_range(1, 1 << 20)},
      {keys::kElasticMinRatio.name, KnobType::Double, 0.25, "",
       "the adaptive ratio's floor (verl: 1 / parameter_sync_step, 4 in PR #7373's run)", base::in_range(0.01, 1.0)},
      {keys::kElasticToRolloutS.name, KnobType::Double, -1.0, "s",
       "the switch to rollout (trainer state to host memory, weights into the hybrid engines); -1: modelled from the "
       "trainer's state and the weights (sim/elastic_switch.hpp)",
       base::in_range(-1.0, 1e6)},
      {keys::kElasticToTrainerS.name, KnobType::Double, -1.0, "s",
       "the switch back (abort, engines asleep, trainer state from host memory); -1: modelled", base::in_range(-1.0, 1e6)},
  };
  return {"elastic",
          "async plus elastic splits (verl PR #7373): the idle trainer's GPUs serve as extra engines until round(ratio x B) "
          "groups are queued, with an adaptive ratio",
          std::move(knobs),
          [](const base::Config& c) -> std::unique_ptr<Policy> {
            ElasticParams p;
            p.threshold_ratio = c.get(policies::keys::kElasticThresholdRatio);
            p.adaptive = c.get(policies::keys::kElasticAdaptive);
            p.step_up = c.get(policies::keys::kElasticStepUp);
            p.step_down = c.get(policies::keys::kElasticStepDown);
            p.release_steps = c.get(policies::keys::kElasticReleaseSteps);
            p.min_ratio = c.get(policies::keys::kElasticMinRatio);
            // Between local steps the trainer is idle but its step unfinished: not a time to lend its GPUs.
            if (c.get(policies::keys::kAsyncLocalSteps) != 1) {
              throw base::ConfigError("key 'async.local_steps': elastic lends the trainer's GPUs between whole steps; set it to 1");
            }
            return std::make_unique<ElasticPolicy>(make_base_policy("async", c), p);
          },
          {"async"}};
}

}  // namespace april::policies
