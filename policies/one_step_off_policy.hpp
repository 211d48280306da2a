#pragma once
// verl's one-step off-policy pipeline (docs/design.md 3b), on a disaggregated
// cluster. Batch 0 is rolled out like sync (B fresh groups). When it is
// ready, the trainer trains it and batch 1's rollout starts at that instant
// with the weights the engines hold. From then on a sync starts when both the
// train step and the rollout in progress have ended; when it ends, the
// trainer trains the batch that rollout made and the next rollout starts.
// Batch k >= 1 is produced by version k - 1 and trained at version k.
// Our reading where the contract is silent: a group the filter rejects is
// replaced by one fresh group, so each rollout still yields B groups.
#include "policies/policy.hpp"
#include "policies/registry.hpp"

namespace april::policies {

class OneStepOffPolicy final : public Policy {
 public:
  Decisions on_step_start(const RolloutView& view) override;
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  Decisions on_train_end(const RolloutView& view) override;
  Decisions on_sync_end(const RolloutView& view) override;
  [[nodiscard]] bool overlaps() const override { return true; }
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override { return 2 * batch_size; }
};

PolicyEntry one_step_off_policy_entry();

}  // namespace april::policies
