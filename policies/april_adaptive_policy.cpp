#include "policies/april_adaptive_policy.hpp"

#include <fmt/format.h>

namespace april::policies {
Decisions AprilAdaptivePolicy::wave(const RolloutView& view) const {
  Decisions d = take_from_buffer_fifo(view, b_prime_, p_.max_staleness);
  d.fresh_groups = b_prime_ - static_cast<std::int64_t>(d.take_from_buffer.size());
  return d;
}

Decisions AprilAdaptivePolicy::on_step_start(const RolloutView& view) {
  if (last_step_ >= 0) {
    std::int64_t buffer_tok = 0;
    for (GroupId id : view.buffer()) buffer_tok += view.group(id).generated_tok;
    // A run's first step (version 0) is on-policy whatever alpha is: nothing
    // can be buffered yet. Its share says nothing about alpha, so only the
    // memory ceiling applies after it; counting the share would push alpha up
    // by gain x target for nothing.
    const std::optional<double> share = last_step_ > 0 ? std::optional<double>(last_offpolicy_share_) : std::nullopt;
    controller_.update(share, static_cast<std::int64_t>(view.buffer().size()), buffer_tok, view.batch_size());
  }
  b_prime_ = over_sampling_groups(controller_.alpha(), view.batch_size());
  return wave(view);
}

Decisions AprilAdaptivePolicy::on_group_accepted(const RolloutView& view, GroupId group) {
  Decisions d = FirstCompleteBatchPolicy::on_group_accepted(view, group);
  if (d.end_with_batch) {
    // The batch's off-policy token share, as the trainer will count it.
    std::int64_t tokens = 0, offpolicy = 0;
    for (GroupId id : *d.end_with_batch) {
      const GroupInfo info = view.group(id);
      tokens += info.generated_tok;
      offpolicy += info.offpolicy_tok;
    }
    last_offpolicy_share_ = tokens > 0 ? static_cast<double>(offpolicy) / static_cast<double>(tokens) : 0.0;
    last_step_ = view.step();
  }
  return d;
}

Decisions AprilAdaptivePolicy::on_group_rejected(const RolloutView& view, GroupId /*group*/) {
  // As april: when the filter leaves too few candidates, another wave of B'.
  if (shortfall(view) > 0) return wave(view);
  return {};
}

std::int64_t AprilAdaptivePolicy::resident_groups_bound(std::int64_t batch_size) const {
  return over_sampling_groups(p_.controller.alpha_max, batch_size);
}

PolicyEntry april_adaptive_policy_entry() {
  using base::Knob;
  using base::KnobType;
  constexpr double kMaxAlpha = 1024.0;
  std::vector<Knob> knobs = {
      {keys::kAprilAdaptiveAlpha.name, KnobType::Double, 2.0, "", "the first step's over-provisioning factor (B' = ceil(alpha * B))",
       base::in_range(1.0, kMaxAlpha)},
      {keys::kAprilAdaptiveAlphaMin.name, KnobType::Double, 1.0, "", "the controller's lowest alpha", base::in_range(1.0, kMaxAlpha)},
      {keys::kAprilAdaptiveAlphaMax.name, KnobType::Double, 4.0, "", "the controller's highest alpha (bounds in-flight groups and memory)",
       base::in_range(1.0, kMaxAlpha)},
      {keys::kAprilAdaptiveTargetOffpolicy.name, KnobType::Double, 0.5, "",
       "off-policy share of the trained tokens the controller settles at (offpolicy_token_fraction)", base::in_range(0.0, 1.0)},
      {keys::kAprilAdaptiveGain.name, KnobType::Double, 1.0, "1/share",
       "alpha added per unit of share below the target, per step (stable below about 2 / the share's slope in alpha)",
       base::in_range(0.0, 100.0)},
      {keys::kAprilAdaptiveMaxBufferTokens.name, KnobType::Int, std::int64_t{0}, "tok",
       "partial-buffer tokens to hold the buffer near: alpha is capped where the buffer would reach it; 0 = no memory target",
       base::in_range(0, std::int64_t{1} << 50)},
      {keys::kAprilAdaptiveMaxStaleness.name, KnobType::Int, std::int64_t{-1}, "versions",
       "a buffered group older than this restarts from scratch; -1 = no cap", base::at_least(-1)},
  };
  return {"april_adaptive",
          "APRIL with B' chosen each step by a controller: the largest over-provisioning within an off-policy and a buffer target",
          std::move(knobs), [](const base::Config& c) {
            AprilAdaptiveParams p;
            p.controller.alpha = c.get(policies::keys::kAprilAdaptiveAlpha);
            p.controller.alpha_min = c.get(policies::keys::kAprilAdaptiveAlphaMin);
            p.controller.alpha_max = c.get(policies::keys::kAprilAdaptiveAlphaMax);
            p.controller.target_offpolicy = c.get(policies::keys::kAprilAdaptiveTargetOffpolicy);
            p.controller.gain = c.get(policies::keys::kAprilAdaptiveGain);
            p.controller.max_buffer_tok = c.get(policies::keys::kAprilAdaptiveMaxBufferTokens);
            p.max_staleness = c.get(policies::keys::kAprilAdaptiveMaxStaleness);
            if (p.controller.alpha_min > p.controller.alpha_max) {
              throw base::ConfigError(fmt::format("key 'april_adaptive.alpha_min': {} is above april_adaptive.alpha_max = {}",
                                                  p.controller.alpha_min, p.controller.alpha_max));
            }
            if (p.controller.alpha < p.controller.alpha_min || p.controller.alpha > p.controller.alpha_max) {
              throw base::ConfigError(fmt::format("key 'april_adaptive.alpha': {} is outside [alpha_min, alpha_max] = [{}, {}]",
                                                  p.controller.alpha, p.controller.alpha_min, p.controller.alpha_max));
            }
            return std::make_unique<AprilAdaptivePolicy>(p);
          }};
}

}  // namespace april::policies
