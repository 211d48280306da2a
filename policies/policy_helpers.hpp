#pragma once
// Building blocks shared by the built-in policies.
#include <cstdint>

#include "policies/policy.hpp"

namespace april::policies {

// Takes up to `max_groups` groups from the front of the buffer (FIFO). A group
// whose oldest token is more than `max_staleness` versions old restarts from
// scratch (max_staleness < 0: no cap); `restart_all` restarts every one.
Decisions take_from_buffer_fifo(const RolloutView& view, std::int64_t max_groups, std::int64_t max_staleness, bool restart_all = false);

// B' = ceil(alpha x B), at least B. The tolerance keeps an alpha x B that is
// an integer up to floating-point error (2.0000000001 x 32) from rounding up.
// Shared by every policy that over-provisions by a factor, so they round alike.
std::int64_t over_sampling_groups(double alpha, std::int64_t batch_size);

// When at least B groups are accepted: end the phase on the first B.
bool end_if_batch_ready(const RolloutView& view, Decisions& d);

// Groups still missing for the batch if every in-flight group, and every
// complete group the policy has not been told about yet, were accepted.
std::int64_t shortfall(const RolloutView& view);

// The batch is the first B accepted groups; when the filter rejects a group
// and the batch can no longer fill, submit the missing number of fresh groups.
// Shared by the built-in policies, which differ in what they submit.
class FirstCompleteBatchPolicy : public Policy {
 public:
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
};

}  // namespace april::policies
