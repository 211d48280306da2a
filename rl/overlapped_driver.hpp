#pragma once
// An overlapped run (docs/design.md 3b): the rollout never ends; the policy
// starts train steps and syncs by its decisions while the engines go on, and
// a step is the window from one sync's end to the next.
#include <optional>
#include <vector>

#include "rl/backend.hpp"
#include "rl/step_driver.hpp"

namespace april::rl {

class RlLoop;

class OverlappedDriver final : public StepDriver {
 public:
  OverlappedDriver(RlLoop& loop, Backend& backend, OverlappingBackend& overlap) : loop_(loop), backend_(backend), overlap_(overlap) {}
  StepMetrics run_step() override;
  void act_on(const policies::Decisions& d) override;
  void act_before_submissions(const policies::Decisions& d) override;
  [[nodiscard]] bool phase_ended() const override { return false; }
  void on_submitted(policies::GroupId /*id*/) override {}
  void on_rejected(policies::GroupId id) override;  // no phase end to settle it
  // Lent GPUs (elastic splits) are not the trainer's until reclaimed.
  [[nodiscard]] bool trainer_idle() const override { return !train_running_ && !sync_running_ && trainer_gpus_ == TrainerGpus::Training; }
  [[nodiscard]] bool sync_running() const override { return sync_running_; }
  [[nodiscard]] std::int64_t trained_steps() const override { return trained_steps_; }
  // Takes every sample in flight back from the backend with its tokens so far.
  void suspend() override;
  void check_can_save() const override;
  [[nodiscard]] std::optional<nlohmann::json> save() const override;
  void check_kind(bool has_overlapped_part) const override;
  void load(const base::JsonValue& o) override;

 private:
  void begin_window();
  void start_train(const std::vector<policies::GroupId>& batch);
  void start_sync();
  void add_train_report(const TrainReport& r);
  void resubmit_suspended();

  RlLoop& loop_;
  Backend& backend_;
  OverlappingBackend& overlap_;
  bool started_ = false;
  bool suspended_ = false;  // in-flight samples were taken back (suspend) and await resubmission
  bool train_running_ = false, sync_running_ = false;
  std::int64_t trained_steps_ = 0, published_steps_ = 0;  // train steps started, syncs started
  // Local steps (Policy::train_local_steps) of the step in progress started,
  // and ended; the window's reward and accuracy are their mean.
  std::int64_t local_started_ = 0, local_ended_ = 0;
  double part_start_s_ = 0;
  std::int64_t pulls_running_ = 0;  // engines loading weights from their relays
  enum class TrainerGpus { Training, Lending, Lent, Reclaiming } trainer_gpus_ = TrainerGpus::Training;
  void lend_trainer();
  void reclaim_trainer();
  double sync_start_s_ = 0;
  // When the trainer's GPUs left training for rollout (the lend's start), while
  // they are away: the window's trainer_lent_s counts from it.
  std::optional<double> lent_since_s_;
  BackendCounters window_counters_;
  StepMetrics window_;  // the step in progress
  std::optional<StepMetrics> finished_step_;
  BackendEvents events_;  // each wait's, its vectors' capacity kept
};

}  // namespace april::rl
