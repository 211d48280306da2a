#pragma once
// SortedRL-style length-aware scheduling (arXiv 2603.23414). The paper gives
// the mechanism in outline; our reading, one assumption per line:
//  1. A rollout round takes k * B fresh groups at once (k = sorted.updates_per_rollout).
//  2. The round feeds k updates in completion order: each step trains on the
//     first B groups to complete, so short responses are trained first.
//  3. Between updates, in-flight samples are aborted and resumed next step
//     with the new weights (colocated: the trainer needs the GPUs), re-prefilling.
//  4. No fresh groups join until the round is used up (unless a filter rejects
//     groups), so the round's last update waits for its longest responses.
//  5. Off-policyness is bounded by construction (at most k - 1 versions);
//     sorted.max_staleness tightens it by restarting older groups from scratch.
#include <cstdint>

#include "base/config.hpp"
#include "policies/policy_helpers.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct SortedParams {
  std::int64_t updates_per_rollout = 4;
  std::int64_t max_staleness = -1;
};

class SortedPolicy final : public FirstCompleteBatchPolicy {
 public:
  explicit SortedPolicy(SortedParams p) : p_(p) {}
  Decisions on_step_start(const RolloutView& view) override;
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override {
    return p_.updates_per_rollout * batch_size;  // one round
  }

 private:
  SortedParams p_;
};

PolicyEntry sorted_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::IntKey kSortedMaxStaleness{"sorted.max_staleness"};
inline constexpr base::IntKey kSortedUpdatesPerRollout{"sorted.updates_per_rollout"};
}  // namespace keys

}  // namespace april::policies
