#pragma once
// How a step runs, chosen once when the loop is built: rollout, train and
// sync in turn (ColocatedDriver, docs/design.md 3) or overlapped, with the policy
// starting train steps and syncs while the engines go on (OverlappedDriver,
// docs/design.md 3b). The loop applies a policy's submissions itself and hands the
// driver the decisions that are the driver's.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_value.hpp"
#include "policies/policy.hpp"
#include "rl/step_metrics.hpp"

namespace april::rl {

class StepDriver {
 public:
  virtual ~StepDriver() = default;
  virtual StepMetrics run_step() = 0;

  // Colocated: ending the rollout phase with a batch. Overlapped: starting a
  // train step or a sync. Each refuses the other's decisions.
  virtual void act_on(const policies::Decisions& d) = 0;
  // What comes before the instant's submissions: Decisions::move_requests
  // (a source engine's next batch must not move with its old one), and
  // lending the trainer's GPUs or taking them back (the instant's requests
  // go to the engines that serve after it).
  virtual void act_before_submissions(const policies::Decisions& d) = 0;
  // A colocated phase that has its batch takes no more decisions.
  [[nodiscard]] virtual bool phase_ended() const = 0;
  // A group was submitted, or the filter rejected it: a colocated phase
  // settles its groups at its end; overlapped, a rejected group goes at once.
  virtual void on_submitted(policies::GroupId id) = 0;
  virtual void on_rejected(policies::GroupId id) = 0;

  [[nodiscard]] virtual bool trainer_idle() const = 0;
  [[nodiscard]] virtual bool sync_running() const = 0;
  [[nodiscard]] virtual std::int64_t trained_steps() const = 0;

  // RlLoop::suspend.
  virtual void suspend() = 0;
  // The checkpoint: throws std::logic_error where the state cannot be saved
  // now; the driver's own part (none when colocated); a checkpoint of the
  // other kind refused, then the driver's part loaded.
  virtual void check_can_save() const = 0;
  [[nodiscard]] virtual std::optional<nlohmann::json> save() const = 0;
  virtual void check_kind(bool has_overlapped_part) const = 0;
  virtual void load(const base::JsonValue& overlapped_part) = 0;
};

}  // namespace april::rl
