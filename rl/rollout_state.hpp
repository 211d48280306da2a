#pragma once
// The loop's bookkeeping, apart from any backend or policy: every group and
// sample it holds, with each sample's tokens by the policy version that made
// them; the buffer of partial groups; the rollout's lists (submitted,
// accepted, complete but not yet counted); and the token accounts every
// decoded token is conserved in (trained, masked, held, wasted).
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "base/inline_vector.hpp"
#include "policies/policy.hpp"
#include "rl/backend.hpp"
#include "rl/group_store.hpp"
#include "rl/step_metrics.hpp"

namespace april::rl {

// Tokens produced by one policy version, in order.
struct Segment {
  std::int64_t version = 0;
  std::int32_t tokens = 0;
  friend bool operator==(const Segment&, const Segment&) = default;
};

// A sample's segments, in token order; two inline, as base::TokensByVersion.
using Segments = base::InlineVector<Segment, 2>;

// 64 bytes, a cache line's worth: each completion reads one sample's record,
// far in memory at a large cluster's size. Not aligned to a line: aligned allocation of every
// group's samples cost more than the straddled lines.
struct RolloutSample {
  std::int32_t target_tok = 0;  // from the workload, before the cap
  std::int32_t generated_tok = 0;
  Segments segments;
  bool finished = false;
  bool in_flight = false;    // submitted this phase and not finished: at an engine, or held
  bool held = false;         // in the loop's dispatch queue, at no engine (SubmissionPlan::hold)
  bool chunk_ended = false;  // its last chunk ended this phase: its KV is in the global cache
};
static_assert(sizeof(RolloutSample) == 64, "a new field costs a second cache line per sample: weigh it");

struct RolloutGroup {
  // What a completion reads comes first, within the group's first 64 bytes
  // (kHotBytes, the span the simulator prefetches before it reports one).
  policies::GroupId id = -1;
  std::vector<RolloutSample> samples;
  std::int32_t finished = 0;
  bool in_flight = false;  // submitted, not complete
  bool rejected = false;
  std::int64_t submit_seq = 0;  // position in the submission order (ties between groups)
  double accepted_s = 0;        // when the filter accepted it
  std::string prompt_id;
  std::int32_t prompt_tok = 0;
  std::vector<std::uint8_t> correct;

  static constexpr std::size_t kHotBytes = 64;
};

// A train batch as the trainer sees it, and (group, prompt) in batch order.
struct TakenBatch {
  std::vector<TrainSample> samples;
  std::vector<std::pair<policies::GroupId, std::string>> ids;
};

struct RolloutState {
  std::int32_t max_response_len = 0;
  bool dynamic_sampling_filter = false;

  std::int64_t version = 0;  // the weights being rolled out
  policies::GroupId next_group_id = 0;
  GroupStore<RolloutGroup> groups;
  std::deque<policies::GroupId> buffer;

  std::vector<policies::GroupId> submitted;         // this phase's, in submission order (colocated)
  std::vector<policies::GroupId> accepted;          // accepted and complete, not yet trained
  std::deque<policies::GroupId> completed_pending;  // complete, policy not told yet
  std::int64_t in_flight_groups = 0;
  std::int64_t in_flight_samples = 0;  // at the engines or held
  std::int64_t held_samples = 0;       // of those, held in the loop's dispatch queue
  StepMetrics* metrics = nullptr;      // the step the counts go to

  std::int64_t total_generated = 0, total_trained = 0, total_wasted = 0, total_masked = 0;
  std::int64_t submit_counter = 0;
  std::int64_t submitted_total = 0, rejected_total = 0;
  // Rejections since the last accepted group: a workload whose groups the
  // filter always rejects would refill forever; past a cap the run stops.
  std::int64_t rejected_in_a_row = 0;

  RolloutGroup& group(policies::GroupId id);
  [[nodiscard]] const RolloutGroup& group(policies::GroupId id) const;
  [[nodiscard]] RolloutSample& sample(SampleKey key);
  [[nodiscard]] policies::GroupInfo info(policies::GroupId id) const;
  [[nodiscard]] static std::int64_t group_tokens(const RolloutGroup& g);
  // The tokens the held groups hold: every generated token is trained,
  // masked, wasted or held, so this is O(1) where counting them is a pass
  // over every held sample (a 4,096-GPU step's end swept some 10^5 groups).
  [[nodiscard]] std::int64_t held_tok() const { return total_generated - total_trained - total_masked - total_wasted; }
  // The same counted over the groups' samples: what the accounts are checked against.
  [[nodiscard]] std::int64_t counted_held_tok() const;

  // Visits the groups of `ids` in order (a step's sweep over its batch). At a
  // large cluster's size the groups are far past the caches, so each group's
  // record is fetched kGroupsAhead ahead and its samples half as far (their
  // address is in the record, which has arrived by then).
  template <typename Ids, typename F>
  void for_each_group_fetched_ahead(const Ids& ids, F&& f) {
    constexpr std::size_t kGroupsAhead = 8;
    const std::size_t n = ids.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kGroupsAhead < n) prefetch_group(ids[i + kGroupsAhead]);
      if (i + kGroupsAhead / 2 < n) prefetch_samples(ids[i + kGroupsAhead / 2]);
      f(ids[i]);
    }
  }

  // Visits i = 0 .. n - 1 in order, the sample `key_at(i)` of each (a sweep
  // over a step's submissions or aborts): its group's record fetched
  // kSamplesAhead ahead, and the sample's own record half as far.
  template <typename KeyAt, typename F>
  void for_each_sample_fetched_ahead(std::size_t n, KeyAt&& key_at, F&& f) {
    constexpr std::size_t kSamplesAhead = 8;
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kSamplesAhead < n) prefetch_group(key_group(key_at(i + kSamplesAhead)));
      if (i + kSamplesAhead / 2 < n) prefetch_sample(key_at(i + kSamplesAhead / 2));
      f(i);
    }
  }

  void add_tokens(RolloutSample& s, std::int32_t new_tok, std::int64_t version);
  void add_progress(RolloutSample& s, const SampleProgress& p);
  // An aborted sample's progress; it is no longer in flight.
  void take_back(const SampleProgress& p);
  // A sample in flight stopped at its chunk's max_new_tok with progress p:
  // counts it and holds it in the dispatch queue; false (nothing done) when
  // it reached max_response_len instead, a finish.
  bool end_chunk(const SampleProgress& p);
  // A sample in flight reached its end with progress p: counts it; true when its group is now complete.
  bool finish_sample(RolloutGroup& g, RolloutSample& s, const SampleProgress& p);
  // Samples that finished at one instant; groups they complete are queued in submission order.
  void record_finished(const std::vector<SampleProgress>& finished);
  void discard_tokens(RolloutGroup& g);
  // Every held sample of `g` leaves the dispatch queue unstarted (the phase ended).
  void drop_held(RolloutGroup& g);
  [[nodiscard]] bool filter_rejects(const RolloutGroup& g) const;
  // The batch's staleness and masking into `m` (tokens staler than
  // `mask_above` get zero weight; < 0: none). The groups stay until the
  // caller erases them (after on_batch has read them).
  TakenBatch take_batch(const std::vector<policies::GroupId>& batch, StepMetrics& m, std::int64_t trained_version, std::int64_t mask_above);

  // Asks the cache for the group's first kHotBytes (a hint: nothing is read).
  void prefetch_group(policies::GroupId id) const;

 private:
  void prefetch_samples(policies::GroupId id) const;
  void prefetch_sample(SampleKey key) const;  // reads the group's record
};

}  // namespace april::rl
