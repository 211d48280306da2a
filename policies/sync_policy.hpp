#pragma once
// Synchronous rollout: submit B groups and wait until B are complete, so every
// trained token is on-policy. Under a filter that rejects groups it behaves as
// slime without partial rollout (sync.filter_refill=wave, the default): when
// rejections leave fewer than B candidates it submits another whole wave of B
// fresh groups, and the groups still in flight once the batch is full are
// aborted and dropped. sync.filter_refill=missing submits only the missing number of
// groups and regenerates any group left over from scratch, first, next step.
#include <cstdint>

#include "base/config.hpp"
#include "policies/policy_helpers.hpp"
#include "policies/registry.hpp"

namespace april::policies {

enum class SyncRefill { Wave, Missing };

class SyncPolicy final : public FirstCompleteBatchPolicy {
 public:
  explicit SyncPolicy(SyncRefill refill = SyncRefill::Wave) : refill_(refill) {}
  Decisions on_step_start(const RolloutView& view) override;
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  // A refill wave of B can join the B still in flight.
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override { return 2 * batch_size; }

 private:
  SyncRefill refill_;
};

PolicyEntry sync_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::StringKey kSyncFilterRefill{"sync.filter_refill"};
}  // namespace keys

}  // namespace april::policies
