#pragma once
// A step in turn (docs/design.md 3): the rollout phase runs until the policy
// names a batch; what is still running is aborted (its progress kept), the
// rest goes back to the buffer; the batch trains; the weights sync.
#include <optional>
#include <vector>

#include <stdexcept>
#include "rl/backend.hpp"

#include "rl/step_driver.hpp"

namespace april::rl {

class RlLoop;

class ColocatedDriver final : public StepDriver {
 public:
  ColocatedDriver(RlLoop& loop, Backend& backend) : loop_(loop), backend_(backend) {}
  StepMetrics run_step() override;
  void act_on(const policies::Decisions& d) override;
  void act_before_submissions(const policies::Decisions& d) override {
    if (!d.move_requests.empty()) throw std::logic_error("only a policy that overlaps rollout and training moves requests between engines");
    if (d.lend_trainer || d.reclaim_trainer)
      throw std::logic_error("only a policy that overlaps rollout and training lends the trainer's GPUs");
  }
  [[nodiscard]] bool phase_ended() const override { return batch_.has_value(); }
  void on_submitted(policies::GroupId id) override;
  void on_rejected(policies::GroupId /*id*/) override {}  // settled at the phase's end
  [[nodiscard]] bool trainer_idle() const override { return true; }
  [[nodiscard]] bool sync_running() const override { return false; }
  // Counts the train steps the policy started; a colocated policy starts none.
  [[nodiscard]] std::int64_t trained_steps() const override { return 0; }
  void suspend() override;
  void check_can_save() const override;
  [[nodiscard]] std::optional<nlohmann::json> save() const override { return std::nullopt; }
  void check_kind(bool has_overlapped_part) const override;
  void load(const base::JsonValue& /*overlapped_part*/) override {}

 private:
  void end_phase(const std::vector<policies::GroupId>& batch, StepMetrics& m);

  RlLoop& loop_;
  Backend& backend_;
  std::optional<std::vector<policies::GroupId>> batch_;
  bool drop_unbatched_ = false;
  BackendCounters phase_counters_;
  double phase_start_s_ = 0;
  std::vector<SampleProgress> finished_;  // each wait's completions, its capacity kept
};

}  // namespace april::rl
