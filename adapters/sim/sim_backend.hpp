#pragma once
// The simulator behind the Backend interface: E modeled engines on one
// discrete-event loop, a least-outstanding-requests router (O(log E) per
// submission, adapters/sim/least_loaded.hpp), and modeled
// train and weight-sync times (colocated: phases take turns, times add).
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "adapters/sim/least_loaded.hpp"
#include "rl/backend.hpp"
#include "rl/run_timeline.hpp"
#include "sim/cost_model.hpp"
#include "sim/engine.hpp"
#include "sim/simulator.hpp"

namespace april::adapters {

// The backend interface this implements (rl/backend.hpp).
using rl::Backend;
using rl::BackendCounters;
using rl::SampleProgress;
using rl::SampleRequest;
using rl::TrainReport;
using rl::TrainSample;

// A change in one engine's running requests, for occupancy timelines
// (timeline.csv, and the engines' tracks of rl/run_timeline.hpp).
using TimelinePoint = rl::EngineRunningChange;

using sim::TrainBatchShape;

struct SimBackendConfig {
  std::int64_t engines = 1;
  sim::EngineConfig engine;
  // The phases of one train step on that batch (their sum is its time).
  std::function<sim::TrainPhaseTimes(const TrainBatchShape&)> train_time_s;
  double sync_time_s = 0;
  // Weights through relays (start_publish, start_pull): the trainer's
  // publish takes sync_time_s; an engine's pull from its host's relay this.
  double pull_time_s = 0;
  // An abort (colocated APRIL's end of rollout): the control request reaches
  // the engines `abort_latency_s` after the decision (they go on generating
  // meanwhile), each stops at its next iteration boundary, then releases its
  // requests at `abort_per_request_s` each; the rollout ends when the last
  // engine is idle, plus `abort_confirm_s` for the controller to see that
  // (slime's poll of each engine's load; the engines idle meanwhile).
  // Nothing in flight: no abort, no cost.
  double abort_latency_s = 0;
  double abort_per_request_s = 0;
  double abort_confirm_s = 0;
  // Disaggregated runs on shared hosts: engine iterations that start while a
  // train step computes take `engine_slowdown_beside_train` times their
  // modelled time, and a train step progresses `train_slowdown_beside_engines`
  // times slower while an engine runs requests (1: separate machines).
  double engine_slowdown_beside_train = 1.0, train_slowdown_beside_engines = 1.0;
  // Disaggregated: wall time at the start of each train step before it
  // computes (handing the batch over and the result back, in one).
  double train_handoff_s = 0.0;
  bool record_timeline = false;
  // Each engine's windows (rl::EngineWindowSpan), for timelines at window
  // detail; sets engine.report_windows.
  bool record_windows = false;
  // Disaggregated cluster: train and sync may overlap the rollout.
  bool can_overlap = false;
  // Elastic splits (verl PRs #6556, #7373): engines on the trainer's GPUs,
  // indexed after the `engines`, with their own accelerator's model and KV
  // capacity; lending them takes `to_rollout_s`, taking them back `to_trainer_s`.
  std::int64_t hybrid_engines = 0;
  sim::EngineConfig hybrid_engine;
  std::shared_ptr<const sim::IterationModel> hybrid_model;
  double to_rollout_s = 0, to_trainer_s = 0;
};

class SimBackend final : public Backend, public rl::OverlappingBackend, private sim::EngineListener {
 public:
  SimBackend(SimBackendConfig config, std::shared_ptr<const sim::IterationModel> model);

  [[nodiscard]] double now_s() const override { return sim_.now().to_s(); }
  // The rollout engines; hybrid engines (elastic splits) are counted apart.
  [[nodiscard]] std::int64_t engines() const override { return config_.engines; }
  [[nodiscard]] std::int64_t max_running_per_engine() const override { return config_.engine.max_running; }
  [[nodiscard]] bool reports_chunk_ends() const override { return true; }
  [[nodiscard]] bool routes_within_engine_ranges() const override { return true; }
  [[nodiscard]] bool lengths_follow_workload() const override { return true; }
  void submit(const SampleRequest& request) override;
  std::vector<SampleProgress> wait_for_completions() override;
  void wait_for_completions_into(std::vector<SampleProgress>& out) override;
  std::vector<SampleProgress> abort_all() override;
  TrainReport train(const std::vector<TrainSample>& batch, std::int64_t version) override;
  void sync_weights(std::int64_t new_version) override;
  [[nodiscard]] BackendCounters counters() const override;

  // A disaggregated cluster's trainer and sync run beside its engines.
  [[nodiscard]] rl::OverlappingBackend* overlapping() override { return config_.can_overlap ? this : nullptr; }
  void start_train(const std::vector<TrainSample>& batch, std::int64_t version, std::int64_t local_steps) override;
  void start_sync(std::int64_t new_version, bool recompute) override;
  rl::BackendEvents wait_for_events() override;
  void wait_for_events_into(rl::BackendEvents& ev) override;
  [[nodiscard]] bool pulls_per_engine() const override { return true; }
  void start_publish(std::int64_t new_version) override;
  void start_pull(std::int32_t engine) override;
  void move_requests(std::int32_t from, std::int32_t to) override;
  [[nodiscard]] std::int64_t hybrid_engines() const override { return config_.hybrid_engines; }
  void start_lend(std::int64_t version) override;
  void start_reclaim() override;

  [[nodiscard]] std::uint64_t fingerprint() const { return sim_.fingerprint(); }
  [[nodiscard]] std::uint64_t events_run() const { return sim_.events_run(); }
  [[nodiscard]] const std::vector<TimelinePoint>& timeline() const { return timeline_; }
  [[nodiscard]] const std::vector<rl::EngineWindowSpan>& windows() const { return windows_; }

 private:
  void on_request_finished(std::size_t engine, sim::RequestKey key, std::int32_t new_tok, sim::TokensByVersion by_version,
                           bool stopped_at_max_new) override;
  void on_running_changed(std::size_t engine, sim::TimeNs now, const sim::EngineOccupancy& occupancy) override;
  void on_window(std::size_t engine, const sim::EngineWindow& window) override;

  SimBackendConfig config_;
  std::shared_ptr<const sim::IterationModel> model_;
  sim::Simulator sim_;
  std::vector<std::unique_ptr<sim::Engine>> engines_;  // the `engines`, then the hybrid engines
  std::size_t standalone_ = 0;                         // the `engines`
  [[nodiscard]] std::span<const std::unique_ptr<sim::Engine>> rollout_engines() const { return {engines_.data(), standalone_}; }
  // Where the trainer's GPUs are (elastic splits); the router sends to the
  // hybrid engines from the lend's start to the reclaim's.
  enum class TrainerGpus { Training, Lending, Lent, Reclaiming } trainer_gpus_ = TrainerGpus::Training;
  bool hybrid_routable_ = false;
  bool lent_ = false, reclaimed_ = false;  // at the instant being reported
  // The router's indexes: outstanding requests per engine, and predicted
  // tokens per engine once a request has carried a prediction.
  LeastLoaded by_requests_, by_predicted_tok_;
  bool predictions_seen_ = false;
  void note_load(std::size_t engine);
  // The engine the router sends `r` to (its range, its rule).
  [[nodiscard]] std::size_t route(const SampleRequest& r) const;
  // The least-loaded of the `engines` for a request another engine gave up.
  [[nodiscard]] std::size_t route_moved(const sim::EngineRequest& r) const;
  std::vector<std::pair<std::size_t, SampleProgress>> finished_;
  std::vector<TimelinePoint> timeline_;
  std::vector<rl::EngineWindowSpan> windows_;
  std::vector<std::pair<std::int64_t, std::int64_t>> last_recorded_;  // per engine: (running, waiting), to record changes only
  // local_steps: the batch is one of that many equal local steps of a step's (OverlappingBackend::start_train).
  [[nodiscard]] rl::TrainPhases train_phases_of(const std::vector<TrainSample>& batch, std::int64_t local_steps = 1) const;
  static double train_time_of(const rl::TrainPhases& phases);
  // The samples finished so far, by engine, deterministically ordered; clears them.
  std::vector<SampleProgress> wait_for_completions_at_this_instant();
  void take_completions_at_this_instant(std::vector<SampleProgress>& out);
  bool train_running_ = false, sync_running_ = false;
  bool train_ended_ = false, sync_ended_ = false;  // at the instant being reported
  std::vector<std::int32_t> pulled_;               // engines whose pull ended at the instant being reported
  std::int64_t published_version_ = 0;             // the version the relays hold
  std::vector<char> pulling_;                      // per engine
  bool resumed_since_wait_ = false;                // engines resumed since wait_for_events last started the idle ones
  // The running train step on a shared host: its work left at full speed as
  // of `train_progress_at_`, the speed since then, its end event.
  double train_work_left_s_ = 0, train_speed_ = 1.0;
  rl::TrainPhases train_phases_;  // of the train step running (overlapped), reported at its end
  sim::TimeNs train_progress_at_{0};
  sim::EventId train_end_event_;
  std::vector<std::int64_t> engine_running_;  // per engine, requests running
  [[nodiscard]] double train_speed_now() const;
  void schedule_train_end();
};

}  // namespace april::adapters
