#include "policies/policy_helpers.hpp"

#include <algorithm>
#include <cmath>

namespace april::policies {

Decisions take_from_buffer_fifo(const RolloutView& view, std::int64_t max_groups, std::int64_t max_staleness, bool restart_all) {
  Decisions d;
  const auto& buf = view.buffer();
  const auto n = std::min<std::int64_t>(max_groups, static_cast<std::int64_t>(buf.size()));
  for (std::int64_t i = 0; i < n; ++i) {
    const GroupId id = buf[static_cast<std::size_t>(i)];
    // A group's oldest version takes a pass over its samples: asked only where
    // a cap applies (a step resumes tens of thousands of groups at 4,096 GPUs).
    bool stale = false;
    if (max_staleness >= 0 && !restart_all) {
      const GroupInfo info = view.group(id);
      stale = info.oldest_version >= 0 && view.step() - info.oldest_version > max_staleness;
    }
    d.take_from_buffer.push_back({id, restart_all || stale});
  }
  return d;
}

std::int64_t over_sampling_groups(double alpha, std::int64_t batch_size) {
  return std::max(batch_size, static_cast<std::int64_t>(std::ceil(alpha * static_cast<double>(batch_size) - 1e-9)));
}

bool end_if_batch_ready(const RolloutView& view, Decisions& d) {
  const auto& acc = view.accepted_groups();
  const auto b = static_cast<std::size_t>(view.batch_size());
  if (acc.size() < b) return false;
  d.end_with_batch = std::vector<GroupId>(acc.begin(), acc.begin() + static_cast<std::ptrdiff_t>(b));
  return true;
}

std::int64_t shortfall(const RolloutView& view) {
  const auto have = static_cast<std::int64_t>(view.accepted_groups().size()) + view.in_flight_groups() + view.pending_complete_groups();
  return std::max<std::int64_t>(0, view.batch_size() - have);
}

Decisions FirstCompleteBatchPolicy::on_group_accepted(const RolloutView& view, GroupId /*group*/) {
  Decisions d;
  end_if_batch_ready(view, d);
  return d;
}

Decisions FirstCompleteBatchPolicy::on_group_rejected(const RolloutView& view, GroupId /*group*/) {
  Decisions d;
  d.fresh_groups = shortfall(view);
  return d;
}

}  // namespace april::policies
