#pragma once
// What the RL loop needs from an execution backend: the simulator's modeled
// engines (SimBackend) or a live engine and trainer. Plain C++ types only:
// torch and the event loop stay behind implementations of this interface.
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/inline_vector.hpp"
#include "base/version_tokens.hpp"

namespace april::rl {

// (group id, sample index) packed into one integer.
using SampleKey = std::uint64_t;
inline SampleKey make_sample_key(std::int64_t group, std::int32_t index) {
  return (static_cast<std::uint64_t>(group) << 20) | static_cast<std::uint32_t>(index);
}
inline std::int64_t key_group(SampleKey k) { return static_cast<std::int64_t>(k >> 20); }
inline std::int32_t key_index(SampleKey k) { return static_cast<std::int32_t>(k & 0xfffffU); }

struct SampleRequest {
  SampleKey key = 0;
  std::string prompt_id;  // a live backend looks the prompt's tokens up by it
  std::int32_t prompt_tok = 0;
  std::int32_t generated_tok = 0;  // tokens already held: a resumed sample re-prefills them
  std::int32_t max_new_tok = 0;    // max_response_len - generated_tok
  // The response length the workload assigned to this sample (its EOS).
  // The simulator stops the sample there; a live engine ignores it.
  std::int32_t target_response_tok = 0;
  // The policy's prediction of the tokens still to generate (SubmissionPlan);
  // 0: none. The simulator's router balances predicted work with it; a live
  // backend with one engine has nothing to route.
  std::int64_t predicted_remaining_tok = 0;
  // Context tokens (prompt + held) whose KV the engine takes from a global
  // cache instead of prefilling them: a chunk continuing where another
  // ended (Policy::chunk_tok, Seer's pool). 0: prefill all.
  std::int32_t cached_tok = 0;
  // The engines the router may choose among: [engine_first, engine_first +
  // engine_count); engine_count 0: every engine (SubmissionPlan::engines).
  std::int32_t engine_first = 0, engine_count = 0;
  // Where the loop keeps this sample's records (its group, the sample), as
  // base::cache_lines: the simulator fetches them into the cache just before
  // it reports the sample finished. A hint, never read through; results do
  // not depend on it.
  std::array<std::uintptr_t, 2> records_at{};
};

struct SampleProgress {
  SampleKey key = 0;
  std::int32_t new_tok = 0;  // generated since this submission
  // Those tokens by the weight version that produced them, in token order;
  // empty: all of them by the version the loop is rolling out.
  base::TokensByVersion by_version;
  // From abort_all only: the sample reached its end (EOS or the length cap)
  // in the iteration the abort let finish; it is complete, not interrupted.
  bool finished = false;
  // It stopped because it generated max_new_tok, before its EOS: a chunk
  // ended (or the length cap, which the loop tells apart).
  bool stopped_at_max_new = false;
};

struct TrainSample {
  SampleKey key = 0;
  std::int32_t prompt_tok = 0;
  std::int32_t response_tok = 0;
  std::int32_t masked_tok = 0;  // tokens given zero weight (staler than the policy's cap)
  // (policy version, tokens), in token order; two inline (base::TokensByVersion says why).
  base::InlineVector<std::pair<std::int64_t, std::int32_t>, 2> segments;
};

// A train batch's size as the train time models read it: samples, prompt +
// response tokens in all, and the longest sample (a padded trainer pays
// samples x longest). One definition for the simulator and for the live
// steps validate sets against it.
struct TrainBatchTokens {
  std::int64_t samples = 0, tokens = 0, longest_tok = 0;
  double attention_pairs = 0;  // sum of L (L + 1) / 2: the query-key pairs of causal attention

  // Counts one sample of `tok` prompt + response tokens.
  void add(std::int64_t tok) {
    ++samples;
    tokens += tok;
    attention_pairs += static_cast<double>(tok) * static_cast<double>(tok + 1) / 2.0;
    if (tok > longest_tok) longest_tok = tok;
  }
};
inline std::int64_t train_tokens_of(const TrainSample& s) { return std::int64_t{s.prompt_tok} + s.response_tok; }
inline TrainBatchTokens train_batch_tokens(const std::vector<TrainSample>& batch) {
  TrainBatchTokens b;
  for (const auto& s : batch) b.add(train_tokens_of(s));
  return b;
}

// The phases of a modelled train step (docs/design.md section 7), in seconds.
struct TrainPhases {
  double old_logprob_s = 0, ref_logprob_s = 0, update_s = 0, grad_reduce_s = 0, optimizer_s = 0, offload_s = 0, other_s = 0;
};

// What a train step reports beyond its duration; a live trainer knows
// rewards, the simulator its modelled phases.
struct TrainReport {
  std::optional<double> reward_mean;
  std::optional<double> accuracy;
  std::optional<double> loss;
  std::optional<TrainPhases> phases;
};

struct BackendCounters {
  double busy_engine_s = 0;   // summed over engines: time with an iteration in progress
  double running_slot_s = 0;  // summed over engines: running requests x time
  std::int64_t preemptions = 0;
  std::int64_t prefill_tok = 0;
};

// What happened at one instant of an overlapped run (docs/design.md 3b), to be
// handled in this order: finished samples, the train step's end, the sync's end.
struct BackendEvents {
  std::vector<SampleProgress> finished;
  std::optional<TrainReport> train_ended;  // the report of the train step that ended
  bool sync_ended = false;                 // a sync, or a publish to the relays, ended
  // Engines whose pull (OverlappingBackend::start_pull) ended: they hold the
  // version published last, in engine order.
  std::vector<std::int32_t> pulled;
  // The trainer's GPUs lent to rollout (start_lend) are serving; they are
  // the trainer's again (start_reclaim).
  bool lent = false, reclaimed = false;
};

// What a backend that can overlap rollout and training adds (disaggregated
// clusters, docs/design.md 3b): train and sync start now and end later, while the
// engines go on generating.
class OverlappingBackend {
 public:
  virtual ~OverlappingBackend() = default;
  // Starts a train step on the trainer's GPUs; its end is reported by
  // wait_for_events. With local_steps > 1 the batch is one of that many equal
  // local steps of the step's batch (Policy::train_local_steps): a modelled
  // trainer costs it as that share of the step.
  virtual void start_train(const std::vector<TrainSample>& batch, std::int64_t version, std::int64_t local_steps) = 0;
  // Starts pushing `new_version` to the engines: they pause at their next
  // iteration boundary until the sync ends; then in-flight requests keep
  // their KV or, with `recompute`, re-prefill.
  virtual void start_sync(std::int64_t new_version, bool recompute) = 0;
  // Blocks until the next instant at which a sample finishes, the train step
  // ends or the sync ends; returns all of that instant. Engines that are idle
  // start their next iteration only when this is called again, after the
  // caller has made its decisions for the instant.
  virtual BackendEvents wait_for_events() = 0;
  // The same into `ev` (all of it replaced), whose vectors' capacity a
  // backend that overrides this keeps (Backend::wait_for_completions_into).
  virtual void wait_for_events_into(BackendEvents& ev) { ev = wait_for_events(); }

  // Weights through relays (Laminar, arXiv 2510.12633, sections 3-4): the
  // trainer publishes a version to a tier of relays, one per rollout
  // machine, and each engine loads it from its own host's relay when the
  // policy says, so engines hold different versions. Only where this is true:
  [[nodiscard]] virtual bool pulls_per_engine() const { return false; }
  // The trainer hands `new_version` to the relays: it is busy for the sync
  // time, the engines go on generating; sync_ended reports the end.
  virtual void start_publish(std::int64_t /*new_version*/) { throw std::logic_error("this backend has no relays to publish to"); }
  // `engine` loads the version published last from its relay: it finishes
  // the iteration in progress, loads (its GPUs' weights over the host link),
  // then goes on, running requests keeping their KV; `pulled` reports the end.
  virtual void start_pull(std::int32_t /*engine*/) { throw std::logic_error("this backend's engines cannot pull weights one by one"); }
  // Laminar's repack: every request of engine `from` moves to engine `to`
  // now, with its tokens (the iteration in progress is lost) and their
  // versions; it prefills prompt + tokens there. Where pulls_per_engine().
  virtual void move_requests(std::int32_t /*from*/, std::int32_t /*to*/) { throw std::logic_error("this backend cannot move requests"); }

  // Elastic splits (verl PRs #6556, #7373): the idle trainer's GPUs serve as
  // hybrid engines, beyond engines(), until the trainer takes them back.
  // How many; 0: this backend has none.
  [[nodiscard]] virtual std::int64_t hybrid_engines() const { return 0; }
  // The trainer (idle) lends its GPUs: the router sends requests to the
  // hybrid engines from now, which start them once they hold `version`'s
  // weights and their KV cache (the switch to rollout); `lent` reports that.
  virtual void start_lend(std::int64_t /*version*/) { throw std::logic_error("this backend has no hybrid engines to lend"); }
  // The trainer takes its GPUs back: the router stops sending to the hybrid
  // engines, their requests go to the other engines now with their tokens
  // (the iteration in progress is lost; each re-prefills prompt + tokens),
  // and the trainer is ready after the switch back; `reclaimed` reports that.
  virtual void start_reclaim() { throw std::logic_error("this backend has no hybrid engines to reclaim"); }
};

// What every backend does: engines that take samples, report them finished
// and stop them; and rollout, train and sync in turn (colocated).
class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual double now_s() const = 0;
  [[nodiscard]] virtual std::int64_t engines() const = 0;
  [[nodiscard]] virtual std::int64_t max_running_per_engine() const = 0;  // 0 = no cap
  virtual void submit(const SampleRequest& request) = 0;
  // Blocks until at least one sample finishes; returns every sample that
  // finished at that moment, in a deterministic order. Requires work in flight.
  virtual std::vector<SampleProgress> wait_for_completions() = 0;
  // The same into `out` (its contents replaced): a caller that keeps `out`
  // from call to call lets a backend that overrides this allocate nothing
  // per completion (the simulator's, at a large cluster's pace).
  virtual void wait_for_completions_into(std::vector<SampleProgress>& out) { out = wait_for_completions(); }
  // Stops everything in flight and returns the progress of each request.
  // The abort takes time (docs/design.md 3: the engines stop at their iteration
  // boundary, plus the abort's own latency): the clock advances by it, and a
  // sample that finishes meanwhile comes back with `finished` set.
  virtual std::vector<SampleProgress> abort_all() = 0;
  // Trains one step on the batch (the clock advances by its duration).
  virtual TrainReport train(const std::vector<TrainSample>& batch, std::int64_t version) = 0;
  // Pushes the weights of `new_version` to the engines.
  virtual void sync_weights(std::int64_t new_version) = 0;
  [[nodiscard]] virtual BackendCounters counters() const = 0;
  // Whether finished samples say when they stopped at max_new_tok before
  // their end (SampleProgress::stopped_at_max_new), as chunked requests need.
  [[nodiscard]] virtual bool reports_chunk_ends() const { return false; }
  // Whether submit honours SampleRequest::engine_first/engine_count when
  // they name fewer than every engine.
  [[nodiscard]] virtual bool routes_within_engine_ranges() const { return false; }
  // Whether samples end at SampleRequest::target_response_tok (the
  // simulator): only then is the workload's length a what-if oracle.
  [[nodiscard]] virtual bool lengths_follow_workload() const { return false; }
  // The overlapped operations, where this backend has them (the live
  // backend; a simulated disaggregated cluster); nullptr where it has not.
  [[nodiscard]] virtual OverlappingBackend* overlapping() { return nullptr; }
};

}  // namespace april::rl
