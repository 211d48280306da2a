#pragma once
// The scheduling-policy contract (docs/design.md section 3). A policy sees events
// and a read-only view of the rollout state and returns decisions; it never
// touches a clock, an engine or torch, so the same object drives the
// simulator and the live backend.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace april::policies {

using GroupId = std::int64_t;

struct GroupInfo {
  GroupId id = -1;
  std::int32_t samples = 0;
  std::int32_t finished_samples = 0;
  std::int64_t generated_tok = 0;
  // Of those, the tokens an older version than step() produced: what a
  // system that logs each segment's version knows (slime, the live backend).
  std::int64_t offpolicy_tok = 0;
  std::int64_t oldest_version = -1;  // version of the oldest token held; -1 when none
  bool complete = false;
};

// One sample as a real system sees it: tokens so far, and whether it ended.
// Never its length to come (tests/policies/policy_view_test.cpp).
struct SampleState {
  std::int32_t generated_tok = 0;
  bool finished = false;
};

class RolloutView {
 public:
  [[nodiscard]] virtual std::int64_t step() const = 0;        // the policy version being rolled out
  [[nodiscard]] virtual std::int64_t batch_size() const = 0;  // B: complete groups per training batch
  // The partial buffer, oldest first: groups returned by earlier aborts.
  [[nodiscard]] virtual const std::deque<GroupId>& buffer() const = 0;
  // Groups submitted this rollout phase and not yet complete.
  [[nodiscard]] virtual std::int64_t in_flight_groups() const = 0;
  // Complete groups that passed the filter this phase, in completion order.
  [[nodiscard]] virtual const std::vector<GroupId>& accepted_groups() const = 0;
  // Groups that completed at the current instant (or were complete when
  // submitted) and that the policy has not been told about yet. They count as
  // candidates for the batch, as in slime, where the refill check runs only
  // after every group completing at one instant has been counted.
  [[nodiscard]] virtual std::int64_t pending_complete_groups() const = 0;
  [[nodiscard]] virtual GroupInfo group(GroupId id) const = 0;
  // Each sample of a group held (not yet trained), in index order.
  [[nodiscard]] virtual std::vector<SampleState> group_samples(GroupId id) const = 0;
  // The prompt a group samples. A prompt drawn again (a later epoch of the
  // dataset, a trace replayed) has the same id: its earlier lengths are
  // what a length predictor learns from (RhymeRL, Seer).
  [[nodiscard]] virtual const std::string& prompt_id(GroupId id) const = 0;

  // Overlapped runs (docs/design.md 3b). step() is the engines' version there,
  // and accepted_groups() the complete groups queued for training.
  [[nodiscard]] virtual bool trainer_idle() const = 0;  // no train step and no sync running
  [[nodiscard]] virtual bool sync_running() const = 0;
  [[nodiscard]] virtual std::int64_t trained_steps() const = 0;  // train steps started so far (a step's last local step started)
  // Groups submitted since the run began, not counting those the filter rejected.
  [[nodiscard]] virtual std::int64_t groups_submitted_unrejected() const = 0;

  // The dispatch queue (SubmissionPlan::hold): samples held at no engine,
  // samples at the engines and not finished, and the engines' room: engines
  // x their cap on running requests (0: no cap), as a serving config states it.
  [[nodiscard]] virtual std::int64_t held_samples() const = 0;
  [[nodiscard]] virtual std::int64_t dispatched_samples() const = 0;
  [[nodiscard]] virtual std::int64_t engine_slots() const = 0;
  // The engines a submission may be pinned to (SubmissionPlan::engines).
  [[nodiscard]] virtual std::int64_t engines() const = 0;

  // What-if only: the response length the workload assigned to a sample,
  // where the backend stops samples there (the simulator); -1 elsewhere (a
  // live engine ends where its model does). No real system knows it: a
  // policy reads it only to model a length predictor of a stated accuracy,
  // perfect or noisy (StreamRL's ranker, streamrl.predictor), never to decide
  // as a deployable policy would.
  [[nodiscard]] virtual std::int32_t workload_response_tok(GroupId group, std::int32_t sample) const = 0;

 protected:
  ~RolloutView() = default;
};

// One sample of a group.
struct SampleRef {
  GroupId group = -1;
  std::int32_t sample = 0;
};

// Engines [first, first + count) of the backend's; count 0: every engine.
struct EngineRange {
  std::int32_t first = 0;
  std::int32_t count = 0;
};

struct BufferTake {
  GroupId group = -1;
  bool restart = false;  // discard its tokens (counted as wasted) and generate from scratch
};

struct Decisions {
  std::vector<BufferTake> take_from_buffer;  // submitted first, in this order
  std::int64_t fresh_groups = 0;             // then this many new groups in dataset order
  // End the rollout phase: train on these accepted groups; everything else
  // submitted this phase is aborted and returns to the buffer, in submission order.
  std::optional<std::vector<GroupId>> end_with_batch;
  // With end_with_batch: drop every other group submitted this phase (its
  // tokens are wasted) instead of buffering it, as slime does without
  // partial rollout.
  bool drop_unbatched = false;
  // Overlapped runs only (Policy::overlaps()): start a train step (or its
  // next local step, Policy::train_local_steps) on these queued groups without
  // ending the rollout (the trainer must be idle), and start pushing the last
  // trained version to the engines.
  std::optional<std::vector<GroupId>> train;
  bool start_sync = false;
  // Samples held by an earlier SubmissionPlan::hold to send to the engines
  // now, in this order, after this instant's other submissions.
  std::vector<SampleRef> release;
  // Relays only (Policy::publishes_to_relays): engines that load the version
  // published last now, each once (it finishes its iteration, loads, goes on).
  std::vector<std::int32_t> pull;
  // Relays only: (from, to) engine pairs, in order: every request of `from`
  // moves to `to` now with its tokens, re-prefilled there (Laminar's repack).
  std::vector<std::pair<std::int32_t, std::int32_t>> move_requests;
  // Elastic splits only (Policy::lends_trainer_gpus), before this instant's
  // submissions: lend the idle trainer's GPUs to rollout (the trainer is not
  // idle again until reclaimed), or take them back.
  bool lend_trainer = false, reclaim_trainer = false;
};

// A sample about to be submitted.
struct Submission {
  GroupId group = -1;
  std::int32_t sample = 0;
  std::int32_t generated_tok = 0;  // held already: a resumed sample re-prefills them
};

// How a policy wants the samples of one instant submitted. Engines admit in
// submission order (a router picks each sample's engine as it is submitted),
// so the order is the admission priority.
struct SubmissionPlan {
  std::vector<std::size_t> order;  // a permutation of the submissions' indices; empty: as given
  // Per submission (input indexing): the policy's prediction of the tokens
  // it has still to generate, > 0 and with the tokens it holds at most
  // 2^31 - 1 (a token count; the loop refuses more); the simulator's router then balances
  // predicted work across engines instead of request counts. Empty: none.
  std::vector<std::int64_t> predicted_remaining_tok;
  // Per submission (input indexing), nonzero: hold the sample in the loop's
  // dispatch queue, at no engine, until a later Decisions::release sends it.
  // A policy that dispatches from one global pool as engines free up (Seer's
  // request buffer) holds what the engines have no room for yet; a held
  // sample belongs to its group in flight and returns to the buffer,
  // unstarted, when the phase ends. Empty: none held. Not with a policy
  // that overlaps rollout and training.
  std::vector<char> hold;
  // Per submission (input indexing): the engines the router may send it to
  // (StreamRL's dedicated long-tail instances); the router picks among them
  // by its usual rule. Empty: every engine. A backend that cannot route
  // within a range refuses a range short of every engine.
  std::vector<EngineRange> engines;
  // Samples held at earlier instants to send now, ahead of this instant's
  // (a policy dispatching from its pool by priority may rank them first).
  std::vector<SampleRef> release;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Decisions on_step_start(const RolloutView& view) = 0;
  // Whether the loop tells this policy of the samples that finish
  // (on_samples_finished); asked once, when the loop is built. Off, a
  // completion costs no call.
  [[nodiscard]] virtual bool wants_sample_events() const { return false; }
  // At one instant, in the backend's order: the samples that finished (EOS
  // or the length cap), and those whose chunk ended (chunk_tok), now held in
  // the dispatch queue with their tokens, for the policy to release. The
  // view already counts both. The groups they complete come after
  // (on_group_accepted / on_group_rejected).
  virtual Decisions on_samples_finished(const RolloutView& /*view*/, const std::vector<SampleRef>& /*finished*/,
                                        const std::vector<SampleRef>& /*chunk_ended*/) {
    return {};
  }
  // Chunked requests (Seer's divided rollout): every request the loop sends
  // asks for at most this many new tokens; a sample that stops there before
  // its end goes back to the dispatch queue (on_samples_finished). 0: none.
  // Needs a backend that reports chunk ends, and wants_sample_events.
  [[nodiscard]] virtual std::int32_t chunk_tok() const { return 0; }
  // Whether a chunk's KV follows its sample to the next engine (a global KV
  // cache, as Seer's Mooncake pool), so the next chunk prefills nothing; else
  // it re-prefills prompt + tokens, as a resumed sample does.
  [[nodiscard]] virtual bool chunk_keeps_kv() const { return false; }
  // A group completed (all samples finished) and passed the filter.
  virtual Decisions on_group_accepted(const RolloutView& view, GroupId group) = 0;
  // A group completed and the filter rejected it; its tokens are wasted.
  virtual Decisions on_group_rejected(const RolloutView& view, GroupId group) = 0;
  // The samples the decisions of this instant submit, in the loop's order
  // (groups as decided, each group's unfinished samples by index), before
  // any reaches an engine. Default: that order, no prediction.
  virtual SubmissionPlan plan_submissions(const RolloutView& /*view*/, const std::vector<Submission>& /*submissions*/) { return {}; }
  // Tokens more than this many versions stale get zero weight in the loss
  // (counted as masked, not trained); -1: none. 0 masks every off-policy token.
  [[nodiscard]] virtual std::int64_t mask_tokens_staler_than() const { return -1; }

  // A policy that overlaps rollout and training (one_step_off, async) runs
  // on a disaggregated cluster only; it is never told the rollout phase
  // ends: on_step_start comes once, then it trains and syncs by Decisions.
  [[nodiscard]] virtual bool overlaps() const { return false; }
  // The trainer finished a step: the version it made can be synced. With
  // train_local_steps() > 1 it is told after each local step; the step's
  // last has ended once trained_steps() > step().
  virtual Decisions on_train_end(const RolloutView& /*view*/) { return {}; }
  // Overlapped runs: a step's batch is trained in this many calls of
  // Decisions::train (local steps, each its own optimizer steps on the groups
  // queued by then), and the version advances, ready to sync, only with the
  // last (verl's fully-async trainer: trigger_parameter_sync_step local
  // steps of require_batches x ppo_mini_batch_size prompts between syncs).
  [[nodiscard]] virtual std::int64_t train_local_steps() const { return 1; }
  // The engines hold the new version (step() has incremented); with
  // publishes_to_relays, the relays do.
  virtual Decisions on_sync_end(const RolloutView& /*view*/) { return {}; }
  // Weights through relays (Laminar): Decisions::start_sync publishes the
  // trained version to the relays without pausing an engine, and each engine
  // loads the version published last when a Decisions::pull names it. Needs
  // a backend whose engines pull one by one (the simulator).
  [[nodiscard]] virtual bool publishes_to_relays() const { return false; }
  // These engines' pulls ended: they hold the version published last.
  virtual Decisions on_engines_pulled(const RolloutView& /*view*/, const std::vector<std::int32_t>& /*engines*/) { return {}; }
  // Elastic splits (verl PRs #6556, #7373): Decisions::lend_trainer lends
  // the idle trainer's GPUs to rollout as hybrid engines, and
  // Decisions::reclaim_trainer takes them back. Needs a backend with hybrid
  // engines (the simulator).
  [[nodiscard]] virtual bool lends_trainer_gpus() const { return false; }
  // The hybrid engines serve (they hold the engines' version).
  virtual Decisions on_trainer_lent(const RolloutView& /*view*/) { return {}; }
  // The trainer has its GPUs back and is idle: a train step may start.
  virtual Decisions on_trainer_reclaimed(const RolloutView& /*view*/) { return {}; }
  // At a version change, in-flight requests re-prefill (AReaL) instead of keeping their KV (PipelineRL).
  [[nodiscard]] virtual bool recompute_on_update() const { return false; }
  // The most groups this policy holds at once (in flight plus buffered) when
  // B = batch_size: what the run's memory estimate is made from.
  [[nodiscard]] virtual std::int64_t resident_groups_bound(std::int64_t batch_size) const { return batch_size; }
};

}  // namespace april::policies
