#pragma once
// APRIL, Active Partial Rollouts (arXiv 2509.18521), as in slime: submit
// B' = ceil(alpha * B) groups, partial buffer first; the first B groups to
// complete form the batch; everything else is aborted and buffered whole, to
// be resumed first next step (re-prefilling prompt + tokens so far).
#include <cstdint>

#include "base/config.hpp"
#include "policies/policy_helpers.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct AprilParams {
  std::int64_t over_sampling_batch_size = 0;  // B'
  std::int64_t max_staleness = -1;            // < 0: no cap, as in the paper
  // Per token: tokens more than this many versions stale are masked in the
  // loss, the rest of the group trains (< 0: none). mask_offpolicy is 0.
  std::int64_t max_token_staleness = -1;
};

class AprilPolicy final : public FirstCompleteBatchPolicy {
 public:
  explicit AprilPolicy(AprilParams p) : p_(p) {}
  Decisions on_step_start(const RolloutView& view) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  [[nodiscard]] std::int64_t mask_tokens_staler_than() const override { return p_.max_token_staleness; }
  // B' in flight; the buffer is resubmitted first, so it never adds to them.
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t) const override { return p_.over_sampling_batch_size; }

 private:
  Decisions wave(const RolloutView& view) const;
  AprilParams p_;
};

PolicyEntry april_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::DoubleKey kAprilAlpha{"april.alpha"};
inline constexpr base::BoolKey kAprilMaskOffpolicy{"april.mask_offpolicy"};
inline constexpr base::IntKey kAprilMaxStaleness{"april.max_staleness"};
inline constexpr base::IntKey kAprilMaxTokenStaleness{"april.max_token_staleness"};
inline constexpr base::IntKey kAprilOverSamplingBatchSize{"april.over_sampling_batch_size"};
}  // namespace keys

}  // namespace april::policies
