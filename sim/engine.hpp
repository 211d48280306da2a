#pragma once
// One rollout engine with continuous batching (vLLM / SGLang style):
//  - at each iteration boundary, finished requests leave, KV overflow preempts
//    the most recently admitted request (it re-prefills later, from the front
//    of the queue), then waiting requests are admitted while the running cap
//    and the KV capacity allow; an iteration that admits pays their prefill;
//  - every running request gains one token per iteration; with per-token
//    prefill (no prefill pass), a request first feeds its context one token
//    per iteration and gains its first token when the last one is fed.
// Weight versions (docs/design.md 3b): tokens carry the version the engine held
// when their iteration started. A weight sync pauses the engine (the
// iteration in progress finishes, no other starts until resume) and, with
// recompute, makes every running request drop its KV and re-prefill.
// Fast-forward: while the batch cannot change, the iterations up to the next
// completion (or KV overflow) are one event, timed in closed form. With
// fast-forward off, every iteration is an event; both give identical results.
#include <cstdint>
#include <vector>

#include "base/version_tokens.hpp"
#include "sim/engine_request.hpp"
#include "sim/event_tags.hpp"
#include "sim/iteration_model.hpp"
#include "sim/running_set.hpp"
#include "sim/simulator.hpp"
#include "sim/waiting_queue.hpp"

namespace april::sim {

using base::TokensByVersion;
using base::VersionTokens;

struct EngineConfig {
  std::int64_t max_running = 0;      // 0 = no cap
  std::int64_t kv_capacity_tok = 0;  // must hold any single request
  bool fast_forward = true;
  bool per_token_prefill = false;  // feed contexts through decode iterations instead of a prefill pass
  bool report_windows = false;     // tell the listener of every window (timelines at window detail)
};

struct EngineCounters {
  std::int64_t busy_ns = 0;     // time with an iteration in progress
  std::int64_t running_ns = 0;  // integral of running requests over time (request x ns)
  std::int64_t iterations = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefill_tok = 0;
  std::int64_t decoded_tok = 0;
};

// An engine's requests and KV cache at one instant.
struct EngineOccupancy {
  std::int64_t running = 0;  // decoding (or prefilling) this iteration
  std::int64_t waiting = 0;  // queued for a running slot or KV room
  std::int64_t kv_tok = 0;   // tokens resident in the KV cache
};

// A stretch of iterations over one batch, as the engine times it: a prefill
// iteration (its admissions' contexts, then a token for every running
// request) or decode iterations run as one (fast-forward). Reported when it
// ends, with EngineConfig::report_windows.
struct EngineWindow {
  TimeNs start{0}, end{0};
  std::int64_t iterations = 0;        // complete; an abort loses the one in progress
  std::int64_t batch = 0;             // running requests
  std::int64_t kv_tok = 0;            // resident in the KV cache at its start
  std::int64_t prefill_tok = 0;       // context tokens its prefill pass computed (0: decode only)
  std::int64_t prefill_requests = 0;  // requests admitted with that prefill
  bool aborted = false;               // cut by abort_all
};

class EngineListener {
 public:
  // `by_version`: the tokens generated since submission (new_tok in all), by the version that produced them.
  // Handed over (moved): the engine has no further use for it. `stopped_at_max_new`: the request's
  // EngineRequest::stop_is_max_new (it stopped at its cap, not its end).
  virtual void on_request_finished(std::size_t engine, RequestKey key, std::int32_t new_tok, TokensByVersion by_version,
                                   bool stopped_at_max_new) = 0;
  // The number of running requests may have changed (called at every segment
  // start and on abort); for occupancy timelines, with the queue and the KV
  // cache at that instant.
  virtual void on_running_changed(std::size_t /*engine*/, TimeNs /*now*/, const EngineOccupancy& /*occupancy*/) {}
  // A window ended (EngineConfig::report_windows only).
  virtual void on_window(std::size_t /*engine*/, const EngineWindow& /*window*/) {}

 protected:
  ~EngineListener() = default;
};

struct AbortedRequest {
  RequestKey key;
  std::int32_t new_tok;  // generated since submission
  TokensByVersion by_version;
};

class Engine {
 public:
  Engine(std::size_t index, Simulator& sim, const IterationModel& model, EngineConfig config, EngineListener& listener);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; it joins at the next iteration boundary (or at once,
  // through a kick event at the current time, when the engine is idle).
  void submit(const EngineRequest& request);
  // Stops everything at the current time; tokens of the iteration in progress
  // are lost. Returns every queued or running request with its progress.
  std::vector<AbortedRequest> abort_all();
  // The same stop, for a repack (Laminar): every request leaves whole, with
  // its tokens since submission by version, for another engine to adopt().
  std::vector<EngineRequestState> take_all();
  // A request another engine gave up (take_all): it keeps its tokens and
  // their versions, and prefills prompt + tokens when admitted here.
  void adopt(EngineRequestState moved);

  // A weight sync begins: the iteration in progress (if any) finishes, and
  // no iteration starts until resume(). Requests may still be submitted.
  // With `stop_at_boundary_now`, an iteration that ends exactly now (its event
  // not yet run) is the last one, as per-iteration stepping would have it;
  // an abort, which runs the events before its instant only, needs that.
  void pause(bool stop_at_boundary_now = false);
  // The sync ended: iterations from now on use `version`. With `drop_kv`
  // (recompute) every running request drops its KV and re-prefills its prompt
  // and tokens when next admitted; queued ones keep their place behind them.
  // It does not start an iteration: the caller decides first what to submit
  // at this instant (docs/design.md 3b's order), then calls start_if_idle().
  void resume(std::int64_t version, bool drop_kv);
  // Starts the next iteration at the current instant if there is work and nothing stops it.
  void start_if_idle();
  // Iterations that start from now on take `factor` times their modelled
  // time (a trainer computing on the same host, docs/design.md 3b's shared
  // machines); an iteration in progress keeps its speed.
  void set_time_factor(double factor);
  [[nodiscard]] bool paused() const { return paused_; }
  [[nodiscard]] std::int64_t version() const { return version_; }

  [[nodiscard]] std::size_t outstanding() const { return running_.live() + waiting_.size(); }
  [[nodiscard]] std::size_t running() const { return running_.live(); }
  // Tokens the predicted requests held here (running or waiting) are still
  // predicted to generate, at least 1 each. Read at submission instants,
  // which are segment ends or idle times, so every request's count is current.
  [[nodiscard]] std::int64_t predicted_outstanding_tok();
  [[nodiscard]] std::int64_t resident_kv_tok() const { return resident_kv_tok_; }
  [[nodiscard]] EngineOccupancy occupancy() const {
    return {static_cast<std::int64_t>(running_.live()), static_cast<std::int64_t>(waiting_.size()), resident_kv_tok_};
  }
  [[nodiscard]] const EngineCounters& counters() const { return counters_; }
  [[nodiscard]] bool busy() const { return busy_; }
  // When the segment in progress ends (now when idle): after pause(), the
  // iteration boundary at which a paused engine stops.
  [[nodiscard]] TimeNs busy_until() const;

 private:
  using Request = EngineRequestState;
  void enqueue(Request r);  // submit and adopt: checks, queues, starts an idle engine

  void kick();
  // What the event ending this engine's segment (or kicking it) reads first.
  [[nodiscard]] PrefetchHint segment_end_hint() const;
  void cut_at_next_boundary(bool boundary_now_counts = false);
  void drop_running_kv();
  void on_segment_end();
  // The segment in progress as a window of `iterations`, ended at `end`.
  void report_window(std::int64_t iterations, TimeNs end, bool aborted);
  // Applies `iterations` of the current segment, ending at `end`: the running
  // set's clock advances (O(1) in the batch; per-token prefill also counts
  // the context tokens fed, over the batch).
  void apply_iterations(std::int64_t iterations, TimeNs end);
  void boundary();
  void start_segment();
  [[nodiscard]] std::int64_t iterations_done_by(TimeNs t) const;
  [[nodiscard]] std::int64_t segment_time_ns(std::int64_t iterations) const;
  static std::int64_t context_tok(const Request& r) { return r.req.prompt_tok + r.req.generated_tok; }

  std::size_t index_;
  Simulator& sim_;
  const IterationModel& model_;
  EngineConfig config_;
  EngineListener& listener_;

  WaitingQueue<Request> waiting_;
  std::int64_t waiting_predicted_tok_ = 0;  // waiting_work_tok over waiting_
  // A waiting request's predicted tokens left: max(1, predicted end - generated), 0 without a prediction.
  static std::int64_t waiting_work_tok(const Request& r);
  RunningSet running_;  // in admission order: the newest is preempted first
  std::int64_t resident_kv_tok_ = 0;

  // The segment in progress: `seg_iterations_` iterations from `seg_start_`.
  bool busy_ = false;
  bool kick_pending_ = false;
  bool paused_ = false;
  bool drop_kv_pending_ = false;  // recompute asked for while an iteration was running
  std::int64_t version_ = 0;
  TimeNs seg_start_{0};
  std::int64_t seg_batch_ = 0;
  std::int64_t seg_kv0_tok_ = 0;
  std::int64_t seg_prefill_tok_ = 0;
  std::int64_t seg_prefill_requests_ = 0;
  std::int64_t seg_prefill_longest_tok_ = 0;
  std::int64_t seg_counted_prefill_tok_ = 0;  // added to counters_.prefill_tok when the segment began
  std::int64_t seg_iterations_ = 0;
  double time_factor_ = 1.0, seg_time_factor_ = 1.0;  // for segments starting now; for the one in progress
  EventId seg_event_;
  EventId kick_event_;

  EngineCounters counters_;
  std::vector<Request> finished_scratch_;
};

}  // namespace april::sim
