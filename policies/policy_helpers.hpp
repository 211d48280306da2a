#pragma once
// Building blocks shared by the built-in policies.
#include <cstdint>

#include "policies/policy.hpp"

namespace april::policies {

// Takes up to `max_groups` groups from the front of the buffer (FIFO). A group
// whose oldest token is more than `max_staleness` versions old restarts from
// scratch (max_staleness < 0: no cap); `restart_all` restarts every one.
Decisions take_from_buffer_fifo(const RolloutView& view, std::int64_t max_groups, std::int64_t max_staleness,
                                bool restart_all = false);

// When at least B groups are accepted: end the phase on the first B.
bool end_if_batch_ready(const RolloutView& view, Decisions& d);

// Groups still missing for the batch if every in-flight group were accepted.
std::int64_t shortfall(const RolloutView& view);

}  // namespace april::policies
