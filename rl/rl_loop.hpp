#pragma once
// The RL loop, written once for every backend: per step, a rollout phase
// driven by the policy's decisions, then train, then weight sync, then the
// version increments. It owns the rollout state (groups, samples, the partial
// buffer, per-segment versions) and is the policy's read-only view of it.
// With a policy that overlaps (DESIGN.md 3b) the rollout never ends: the
// policy starts train steps and syncs by its decisions while the engines go
// on, and a step is the window from one sync's end to the next.
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "rl/backend.hpp"
#include "rl/step_metrics.hpp"
#include "policies/policy.hpp"
#include "base/workload_source.hpp"

namespace april::rl {

struct LoopOptions {
  std::int64_t batch_size = 32;          // B, rollout_batch_size
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

// Tokens produced by one policy version, in order.
struct Segment {
  std::int64_t version = 0;
  std::int32_t tokens = 0;
  friend bool operator==(const Segment&, const Segment&) = default;
};

class RlLoop final : public policies::RolloutView {
 public:
  RlLoop(Backend& backend, policies::Policy& policy, base::WorkloadSource& workload, LoopOptions options);

  StepMetrics run_step();

  // RolloutView
  [[nodiscard]] std::int64_t step() const override { return version_; }
  [[nodiscard]] std::int64_t batch_size() const override { return opt_.batch_size; }
  [[nodiscard]] const std::deque<policies::GroupId>& buffer() const override { return buffer_; }
  [[nodiscard]] std::int64_t in_flight_groups() const override { return in_flight_groups_; }
  [[nodiscard]] const std::vector<policies::GroupId>& accepted_groups() const override { return accepted_; }
  [[nodiscard]] std::int64_t pending_complete_groups() const override {
    return static_cast<std::int64_t>(completed_pending_.size());
  }
  [[nodiscard]] policies::GroupInfo group(policies::GroupId id) const override;
  [[nodiscard]] bool trainer_idle() const override { return !train_running_ && !sync_running_; }
  [[nodiscard]] bool sync_running() const override { return sync_running_; }
  [[nodiscard]] std::int64_t trained_steps() const override { return trained_steps_; }
  [[nodiscard]] std::int64_t groups_submitted_unrejected() const override { return submitted_total_ - rejected_total_; }

  // Accounting, for conservation checks: every decoded token (reported by
  // the backend) is trained, masked (in a batch, zero weight), held by a
  // group not yet trained, or wasted.
  [[nodiscard]] std::int64_t total_generated_tok() const { return total_generated_; }
  [[nodiscard]] std::int64_t total_trained_tok() const { return total_trained_; }
  [[nodiscard]] std::int64_t total_masked_tok() const { return total_masked_; }
  [[nodiscard]] std::int64_t total_wasted_tok() const { return total_wasted_; }
  [[nodiscard]] std::int64_t buffered_tok() const;
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
  // Overlapped runs, between steps: takes every sample in flight back from
  // the backend with its tokens so far (their versions kept), so that the
  // state can be saved. The next run_step submits them again (each
  // re-prefills prompt + its tokens, as at a version change under recompute).
  void suspend();

  // Called with each training batch: (group id, prompt id) in batch order.
  std::function<void(std::int64_t step, const std::vector<std::pair<policies::GroupId, std::string>>&)> on_batch;

 private:
  struct Sample {
    std::int32_t target_tok = 0;     // from the workload, before the cap
    std::int32_t generated_tok = 0;
    std::vector<Segment> segments;
    bool finished = false;
    bool in_flight = false;
  };
  struct Group {
    policies::GroupId id = -1;
    std::string prompt_id;
    std::int32_t prompt_tok = 0;
    std::vector<std::uint8_t> correct;
    std::vector<Sample> samples;
    std::int32_t finished = 0;
    bool in_flight = false;  // submitted this phase, not complete
    bool rejected = false;
    std::int64_t submit_seq = 0;  // position in the submission order (ties between groups)
    double accepted_s = 0;        // when the filter accepted it
  };

  void apply(const policies::Decisions& d);
  void submit_group(Group& g);
  void on_group_complete(policies::GroupId id);
  void end_phase(const std::vector<policies::GroupId>& batch, StepMetrics& m);
  // The batch's staleness and masking into `m`; what the trainer sees. Erases the groups.
  std::vector<TrainSample> take_batch(const std::vector<policies::GroupId>& batch, StepMetrics& m, std::int64_t trained_version);
  void record_finished(const std::vector<SampleProgress>& finished);
  void drain_completed();
  StepMetrics run_step_overlapped();
  void begin_window();
  // Queues g's unfinished samples; flush_submissions submits the queue in the policy's plan.
  void submit_samples(Group& g);
  void flush_submissions();
  void resubmit_suspended();
  [[nodiscard]] static nlohmann::json group_json(const Group& g);
  [[nodiscard]] static Group group_from_json(const nlohmann::json& j);
  void start_train_overlapped(const std::vector<policies::GroupId>& batch);
  void start_sync_overlapped();
  void add_tokens(Sample& s, std::int32_t new_tok, std::int64_t version);
  void add_progress(Sample& s, const SampleProgress& p);
  // A sample in flight reached its end with progress p: counts it; true when its group is now complete.
  bool finish_sample(Group& g, Sample& s, const SampleProgress& p);
  std::int64_t group_tokens(const Group& g) const;
  void discard_tokens(Group& g);
  bool filter_rejects(const Group& g) const;
  Group& group_ref(policies::GroupId id);
  const Group& group_ref(policies::GroupId id) const;

  Backend& backend_;
  policies::Policy& policy_;
  base::WorkloadSource& workload_;
  LoopOptions opt_;

  std::int64_t version_ = 0;
  policies::GroupId next_group_id_ = 0;
  std::unordered_map<policies::GroupId, Group> groups_;
  std::deque<policies::GroupId> buffer_;

  // Rollout-phase state.
  std::vector<policies::GroupId> submitted_;  // in submission order
  std::vector<policies::GroupId> accepted_;
  std::deque<policies::GroupId> completed_pending_;  // complete, policy not told yet
  std::int64_t in_flight_groups_ = 0;
  std::int64_t in_flight_samples_ = 0;
  std::optional<std::vector<policies::GroupId>> batch_;
  bool drop_unbatched_ = false;
  StepMetrics* phase_metrics_ = nullptr;
  BackendCounters phase_counters_;
  double phase_start_s_ = 0;

  std::int64_t total_generated_ = 0, total_trained_ = 0, total_wasted_ = 0, total_masked_ = 0;
  std::int64_t submit_counter_ = 0;
  std::vector<SampleRequest> to_submit_;  // queued by submit_samples, in the loop's order

  // Overlapped runs.
  bool overlapped_started_ = false;
  bool suspended_ = false;  // in-flight samples were taken back (suspend) and await resubmission
  bool train_running_ = false, sync_running_ = false;
  std::int64_t trained_steps_ = 0, published_steps_ = 0;  // train steps started, syncs started
  std::int64_t submitted_total_ = 0, rejected_total_ = 0;
  // Rejections since the last accepted group: a workload whose groups the
  // filter always rejects (every prompt always solved, or never) would refill
  // forever; past kMaxRejectionsInARow the run stops, saying so.
  std::int64_t rejected_in_a_row_ = 0;
  double train_start_s_ = 0, sync_start_s_ = 0;
  StepMetrics window_;                      // the step in progress
  std::optional<StepMetrics> finished_step_;
};

}  // namespace april::rl
