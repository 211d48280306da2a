#pragma once
// An engine's running requests, kept so that an iteration boundary costs what
// changed there, not the size of the batch (so a completion's cost stays flat
// as the cluster grows). Every running request gains one token (or feeds one
// context token) per iteration, so the set keeps one iteration clock and each
// request its counts as of the clock when it last changed ("materialized");
// its counts now follow from the clock in closed form. Completions come from a
// heap of finish clocks, removals leave tombstones that compaction clears, and
// the weight version of each stretch of the clock is recorded, so that a
// request's tokens-by-version are exact when it is materialized.
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/aligned_allocator.hpp"
#include "base/version_tokens.hpp"
#include "sim/engine_request.hpp"
#include "sim/finish_heap.hpp"
#include "sim/predicted_work.hpp"

namespace april::sim {

// A request as an engine queues it, and as the running set hands it back
// (finished, preempted or taken), its counts brought to the current clock.
// 128 bytes: two whole lines in a queue's array.
struct EngineRequestState {
  EngineRequest req;
  std::int32_t submitted_tok = 0;  // generated_tok at submission
  // Context tokens still to feed (per-token prefill) and KV tokens held; at
  // most prompt + stop_at, which Engine::submit keeps in 32 bits.
  std::int32_t feed_tok = 0;
  std::int32_t held_kv_tok = 0;
  base::TokensByVersion by_version;  // tokens since submission, by version
  // Unused: keeps the state two whole lines (at 112 bytes most slots of an
  // array would straddle three).
  std::array<std::uint64_t, 2> padding_{};
};
static_assert(sizeof(EngineRequestState) == 128, "a new field costs a third cache line per request: weigh it");

// A running request as the set keeps it: one 64-byte line, aligned, where the
// queued form is two (a finish reads and writes it, an admission writes it,
// and at 4,096 GPUs each line is a miss, which kept a completion's cost from
// staying flat as the cluster grows). Its counts are as of base_clock. Its tokens by
// version before admission (a preempted or adopted request's; none for a
// fresh one) wait in the set's pool; those since follow from the clock.
struct RunningRequest {
  RequestKey key = 0;
  std::array<std::uintptr_t, 2> touched_on_finish{};  // EngineRequest's
  std::int64_t base_clock = 0;
  std::int32_t prompt_tok = 0;
  std::int32_t generated_tok = 0;
  std::int32_t stop_at_tok = 0;
  std::int32_t predicted_end_tok = 0;
  std::int32_t submitted_tok = 0;
  std::int32_t feed_tok = 0;
  std::int32_t held_kv_tok = 0;
  std::uint32_t earlier : 31 = 0;         // 1 + its entry in the pool; 0: none
  std::uint32_t stop_is_max_new : 1 = 0;  // EngineRequest's
};
static_assert(sizeof(RunningRequest) == 64, "a running request is one cache line");

class RunningSet {
 public:
  using Request = EngineRequestState;

  [[nodiscard]] std::int64_t clock() const { return clock_; }
  [[nodiscard]] std::size_t live() const { return live_; }
  [[nodiscard]] bool empty() const { return live_ == 0; }

  // Iterations that start at the current clock produce tokens of `version`.
  void set_version(std::int64_t version);
  // `iterations` more iterations ran over every live request.
  void advance(std::int64_t iterations) { clock_ += iterations; }

  // Admits `r` as the newest, its counts (feed and held KV included) as of now.
  void admit(Request r);
  // Iterations until the next live request finishes (feeds its context and reaches stop_at_tok).
  [[nodiscard]] std::int64_t iterations_to_next_finish();
  // The next request to finish, as base::cache_lines: the heap's top and its
  // children, its slot's entry, the request, and what its submitter will read
  // (after iterations_to_next_finish; none when empty).
  [[nodiscard]] std::array<std::uintptr_t, 5> next_finish_addresses() const;
  // Removes the live requests finished at the current clock, materialized, in admission order.
  void take_finished(std::vector<Request>& out);
  // Removes the newest live request, materialized (preemption).
  Request take_newest();
  // Removes every live request, materialized, in admission order.
  std::vector<Request> take_all();

  // Over the live requests with a prediction: max(1, predicted end - generated now).
  [[nodiscard]] std::int64_t predicted_outstanding_tok() { return predicted_.total_at(clock_); }

  // A live request's counts now.
  [[nodiscard]] std::int64_t generated_now(const RunningRequest& r) const;
  [[nodiscard]] std::int64_t feed_now(const RunningRequest& r) const;

  template <typename F>
  void for_each_live(F&& f) const {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slot_finish_[i] != kDead) f(slots_[i]);
    }
  }

 private:
  // A finish: the request's finish clock and its slot (where it sits in
  // slots_, in admission order, renumbered on compaction) in one word.
  using Finish = FinishEntry;
  struct VersionMark {
    std::int64_t clock;
    std::int64_t version;
  };

  [[nodiscard]] static std::int64_t finish_clock(const RunningRequest& r);
  // PredictedWork's T0 (the clock it generates from) and K (T0 plus its predicted tokens left then).
  [[nodiscard]] static std::int64_t prediction_start(const RunningRequest& r);
  [[nodiscard]] static std::int64_t prediction_end(const RunningRequest& r);
  // Slot `slot`'s request, out of the set (its slot left to the caller),
  // counts and tokens by version brought to the current clock.
  Request take_out(std::size_t slot);
  // Whether a heap entry is its slot's live request's (not one that has left).
  [[nodiscard]] bool is_live(const Finish& f) const;
  void drop_stale_finishes();
  // The finish heap made again from the live requests alone.
  void rebuild_finishes();
  void compact();

  std::int64_t clock_ = 0;
  std::vector<RunningRequest, base::AlignedAllocator<RunningRequest, 64>> slots_;  // in admission order; dead ones until compaction
  // Each slot's live request's heap entry, or kDead once it has left: the
  // dense copy that tells a heap entry from a stale one without touching the
  // request's own cache lines (after a preemption every boundary asks). A
  // stale entry can equal a live one (its slot reused, with the same finish
  // clock): the first of the two taken marks the slot dead.
  static constexpr std::uint64_t kDead = UINT64_MAX;
  std::vector<std::uint64_t> slot_finish_;
  std::size_t live_ = 0, dead_ = 0;
  // Rebuilt in place, with no allocation, when a preemption storm has filled
  // it with stale entries.
  FinishHeap finishes_;             // stale entries skipped
  std::size_t stale_finishes_ = 0;  // entries of preempted requests still in finishes_
  std::vector<VersionMark> marks_;  // the version from each clock on, in clock order
  // Tokens by version from before admission, for the requests that had some
  // (RunningRequest::earlier); freed entries are reused.
  std::vector<base::TokensByVersion> earlier_;
  std::vector<std::uint32_t> earlier_free_;
  PredictedWork predicted_;       // the live requests with a prediction
  std::vector<Finish> finished_;  // scratch
};

}  // namespace april::sim
