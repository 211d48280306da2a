#pragma once
// The RL loop, written once for every backend: per step, a rollout phase
// driven by the policy's decisions, then train, then weight sync, then the
// version increments. It owns the rollout state (groups, samples, the partial
// buffer, per-segment versions) and is the policy's read-only view of it.
// With a policy that overlaps (docs/design.md 3b) the rollout never ends: the
// policy starts train steps and syncs by its decisions while the engines go
// on, and a step is the window from one sync's end to the next.
//
// The jobs have their own units: the bookkeeping (rollout_state), a step in
// turn (colocated_driver) or overlapped (overlapped_driver), chosen once when
// the loop is built, and the checkpoint (loop_checkpoint). This file is the
// policy's side: its decisions applied, groups submitted in its plan.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_value.hpp"
#include "base/workload_source.hpp"
#include "policies/policy.hpp"
#include "rl/backend.hpp"
#include "rl/rollout_state.hpp"
#include "rl/step_metrics.hpp"

namespace april::rl {

struct LoopOptions {
  std::int64_t batch_size = 32;           // B, rollout_batch_size
  std::int32_t max_response_len = 16384;  // tokens per sample, counting resumed ones
  bool dynamic_sampling_filter = false;   // reject groups whose samples are all correct or all wrong
  // slime's keep_when_insufficient: keep a group the filter rejects when
  // dropping it would leave fewer than B candidates (accepted, in flight, or
  // complete and not yet counted), rather than launch another wave.
  bool keep_rejected_when_insufficient = false;
  std::int64_t gpus = 1;  // the cluster's GPU budget, for GPU-hours
};

// Where one sample of a group stands: tokens so far, and whether it ended.
using policies::SampleState;

class StepDriver;

class RlLoop final : public policies::RolloutView {
 public:
  // Throws std::logic_error when the policy overlaps rollout and training
  // and the backend cannot.
  RlLoop(Backend& backend, policies::Policy& policy, base::WorkloadSource& workload, LoopOptions options);
  ~RlLoop();
  RlLoop(const RlLoop&) = delete;
  RlLoop& operator=(const RlLoop&) = delete;

  StepMetrics run_step();

  // RolloutView
  [[nodiscard]] std::int64_t step() const override { return state_.version; }
  [[nodiscard]] std::int64_t batch_size() const override { return opt_.batch_size; }
  [[nodiscard]] const std::deque<policies::GroupId>& buffer() const override { return state_.buffer; }
  [[nodiscard]] std::int64_t in_flight_groups() const override { return state_.in_flight_groups; }
  [[nodiscard]] const std::vector<policies::GroupId>& accepted_groups() const override { return state_.accepted; }
  [[nodiscard]] std::int64_t pending_complete_groups() const override { return static_cast<std::int64_t>(state_.completed_pending.size()); }
  [[nodiscard]] policies::GroupInfo group(policies::GroupId id) const override { return state_.info(id); }
  [[nodiscard]] bool trainer_idle() const override;
  [[nodiscard]] bool sync_running() const override;
  [[nodiscard]] std::int64_t trained_steps() const override;
  [[nodiscard]] std::int64_t groups_submitted_unrejected() const override { return state_.submitted_total - state_.rejected_total; }
  [[nodiscard]] std::int64_t held_samples() const override { return state_.held_samples; }
  // Samples queued to submit at this instant are not at an engine yet.
  [[nodiscard]] std::int64_t dispatched_samples() const override {
    return state_.in_flight_samples - state_.held_samples - static_cast<std::int64_t>(to_submit_.size());
  }
  [[nodiscard]] std::int64_t engine_slots() const override { return engine_slots_; }
  [[nodiscard]] std::int64_t engines() const override { return engines_; }
  [[nodiscard]] std::int32_t workload_response_tok(policies::GroupId group, std::int32_t sample) const override;

  // Accounting, for conservation checks: every decoded token (reported by
  // the backend) is trained, masked (in a batch, zero weight), held by a
  // group not yet trained, or wasted.
  [[nodiscard]] std::int64_t total_generated_tok() const { return state_.total_generated; }
  [[nodiscard]] std::int64_t total_trained_tok() const { return state_.total_trained; }
  [[nodiscard]] std::int64_t total_masked_tok() const { return state_.total_masked; }
  [[nodiscard]] std::int64_t total_wasted_tok() const { return state_.total_wasted; }
  // Between colocated steps only buffered groups are held; overlapped, also
  // the groups in flight and those queued for training.
  [[nodiscard]] std::int64_t buffered_tok() const { return state_.counted_held_tok(); }  // counted over the groups
  // Segments of a buffered group's samples, for tests and traces.
  [[nodiscard]] std::vector<std::vector<Segment>> group_segments(policies::GroupId id) const;
  [[nodiscard]] std::vector<SampleState> group_samples(policies::GroupId id) const override;
  [[nodiscard]] const std::string& prompt_id(policies::GroupId id) const override;

  // The loop's state between steps (version, buffered groups with their
  // segments, counters), for checkpoints. Only valid between steps; for an
  // overlapped run, only after suspend(). Overlapped, it also holds the
  // groups in flight (with the tokens they had at the suspend), the groups
  // queued for training, whether a train step was started, and the counts
  // the policy reads; a train step's batch is the backend's to save.
  [[nodiscard]] nlohmann::json save_state() const;
  void load_state(const nlohmann::json& state);
  // The same, with errors naming the checkpoint file and the field's path.
  void load_state(const base::JsonValue& state);
  // Overlapped runs, between steps: takes every sample in flight back from
  // the backend with its tokens so far (their versions kept), so that the
  // state can be saved. The next run_step submits them again (each
  // re-prefills prompt + its tokens, as at a version change under recompute).
  void suspend();

  // Called with each training batch: (group id, prompt id) in batch order.
  std::function<void(std::int64_t step, const std::vector<std::pair<policies::GroupId, std::string>>&)> on_batch;

 private:
  friend class ColocatedDriver;
  friend class OverlappedDriver;

  void apply(const policies::Decisions& d);
  void submit_group(RolloutGroup& g);
  // Queues g's unfinished samples; flush_submissions submits the queue in the policy's plan.
  void submit_samples(RolloutGroup& g);
  void flush_submissions();
  [[nodiscard]] SampleRequest make_request(const RolloutGroup& g, std::size_t index) const;
  // Sends held samples to the engines in the policy's order (Decisions::release).
  void release(const std::vector<policies::SampleRef>& samples);
  // Samples that finished at one instant: counted, then each told to a
  // policy that wants sample events, in the backend's order.
  void record_finished(const std::vector<SampleProgress>& finished);
  void on_group_complete(policies::GroupId id);
  void drain_completed();
  // The batch for the trainer: staleness and masking into `m`, on_batch
  // told, the groups erased.
  std::vector<TrainSample> take_batch(const std::vector<policies::GroupId>& batch, StepMetrics& m, std::int64_t trained_version);

  Backend& backend_;
  policies::Policy& policy_;
  base::WorkloadSource& workload_;
  LoopOptions opt_;
  bool sample_events_ = false;  // policy_.wants_sample_events(), asked once
  std::int32_t chunk_tok_ = 0;  // policy_.chunk_tok(), asked once; 0: whole requests
  bool chunk_keeps_kv_ = false;
  std::int64_t engine_slots_ = 0;  // engines x cap on running requests; 0: no cap
  std::int64_t engines_ = 0;
  RolloutState state_;
  std::vector<policies::Submission> to_submit_;  // queued by submit_samples, in the loop's order
  std::unique_ptr<StepDriver> driver_;           // colocated or overlapped, chosen once
};

}  // namespace april::rl
