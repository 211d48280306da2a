#include "policies/sync_policy.hpp"

#include "policies/policy_helpers.hpp"

namespace april::policies {

Decisions SyncPolicy::on_step_start(const RolloutView& view) {
  Decisions d = take_from_buffer_fifo(view, view.batch_size(), -1, /*restart_all=*/true);
  d.fresh_groups = view.batch_size() - static_cast<std::int64_t>(d.take_from_buffer.size());
  return d;
}

PolicyEntry sync_policy_entry() {
  return {"sync", "synchronous: submit B groups, wait for all of them (the baseline)", {},
          [](const sim::Config&) { return std::make_unique<SyncPolicy>(); }};
}

}  // namespace april::policies
