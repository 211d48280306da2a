#pragma once
// The loop's checkpoint, as JSON: groups with their samples' segments, and
// the counts of a step in progress. RlLoop::save_state and load_state
// (defined in loop_checkpoint.cpp) write and read the whole; an overlapped
// run's driver adds its part.
#include <nlohmann/json.hpp>

#include "base/json_value.hpp"
#include "rl/rollout_state.hpp"
#include "rl/step_metrics.hpp"

namespace april::rl {

[[nodiscard]] nlohmann::json group_json(const RolloutGroup& g);
// Refuses a malformed group by its JSON path (base::JsonValue).
[[nodiscard]] RolloutGroup group_from_json(const base::JsonValue& j);
// Reads a group and holds it in `st`; refuses, by the group's JSON path, an
// id held already or one too far from the others (GroupStore::kMaxSpan).
RolloutGroup& hold_group_from_json(RolloutState& st, const base::JsonValue& j);

// The token and group counts of a step in progress (its times restart with
// the resumed clock).
[[nodiscard]] nlohmann::json window_counts_json(const StepMetrics& m);
void load_window_counts(const base::JsonValue& w, StepMetrics& m);

}  // namespace april::rl
