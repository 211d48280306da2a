#pragma once
// Synchronous rollout: submit B groups and wait until B are complete. Groups
// left in flight (only when a filter made it submit more) restart from scratch
// next step, so every trained token is on-policy.
#include "policies/policy_helpers.hpp"
#include "policies/registry.hpp"

namespace april::policies {

class SyncPolicy final : public FirstCompleteBatchPolicy {
 public:
  Decisions on_step_start(const RolloutView& view) override;
};

PolicyEntry sync_policy_entry();

}  // namespace april::policies
