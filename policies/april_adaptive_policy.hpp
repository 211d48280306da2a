#pragma once
// APRIL with adaptive over-provisioning: each step submits B' = ceil(alpha x B)
// groups, partial buffer first, and trains on the first B to complete, as
// `april` does; alpha is set before each step by an AlphaController from what
// the previous step showed (its batch's off-policy token share and the
// buffer's size), so that it settles at the largest over-provisioning within
// the user's targets. It sees what a real system sees: group completions,
// token counts and the version of each token held; never a length to come.
#include <cstdint>

#include "base/config.hpp"
#include "policies/alpha_controller.hpp"
#include "policies/policy_helpers.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct AprilAdaptiveParams {
  AlphaControllerParams controller;
  std::int64_t max_staleness = -1;  // < 0: no cap; as april.max_staleness
};

class AprilAdaptivePolicy final : public FirstCompleteBatchPolicy {
 public:
  explicit AprilAdaptivePolicy(AprilAdaptiveParams p) : p_(p), controller_(p.controller) {}
  Decisions on_step_start(const RolloutView& view) override;
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  // At most ceil(alpha_max x B) in flight; the buffer is resubmitted first.
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override;

  // The alpha and B' of the step in progress (for tests and logs).
  [[nodiscard]] double alpha() const { return controller_.alpha(); }
  [[nodiscard]] std::int64_t over_sampling_batch_size() const { return b_prime_; }

 private:
  Decisions wave(const RolloutView& view) const;
  AprilAdaptiveParams p_;
  AlphaController controller_;
  std::int64_t b_prime_ = 0;
  std::int64_t last_step_ = -1;  // the step whose batch was observed last
  double last_offpolicy_share_ = 0;
};

PolicyEntry april_adaptive_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::DoubleKey kAprilAdaptiveAlpha{"april_adaptive.alpha"};
inline constexpr base::DoubleKey kAprilAdaptiveAlphaMax{"april_adaptive.alpha_max"};
inline constexpr base::DoubleKey kAprilAdaptiveAlphaMin{"april_adaptive.alpha_min"};
inline constexpr base::DoubleKey kAprilAdaptiveGain{"april_adaptive.gain"};
inline constexpr base::IntKey kAprilAdaptiveMaxBufferTokens{"april_adaptive.max_buffer_tokens"};
inline constexpr base::IntKey kAprilAdaptiveMaxStaleness{"april_adaptive.max_staleness"};
inline constexpr base::DoubleKey kAprilAdaptiveTargetOffpolicy{"april_adaptive.target_offpolicy"};
}  // namespace keys

}  // namespace april::policies
