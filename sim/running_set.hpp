#pragma once
// An engine's running requests, kept so that an iteration boundary costs what
// changed there, not the size of the batch (issue: per-completion cost flat as
// the cluster grows). Every running request gains one token (or feeds one
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

#include "base/version_tokens.hpp"
#include "sim/engine_request.hpp"
#include "sim/finish_heap.hpp"

namespace april::sim {

// 128 bytes, two cache lines' worth: a finishing request is fetched ahead of
// its boundary, and the fewer lines the sooner it arrives (issue: per-
// completion cost flat as the cluster grows). Not aligned to a line: aligned
// allocation made the engine's queues slower than the lines it saved.
struct EngineRequestState {
  EngineRequest req;               // generated_tok: as of base_clock while running
  std::int32_t submitted_tok = 0;  // generated_tok at submission
  // Context tokens still to feed (per-token prefill) and KV tokens held, as of
  // base_clock; at most prompt + stop_at, which Engine::submit keeps in 32 bits.
  std::int32_t feed_tok = 0;
  std::int32_t held_kv_tok = 0;
  bool dead = false;  // running only: it has left (a tombstone)
  base::TokensByVersion by_version;  // tokens since submission, by version, up to base_clock
  // Running only: the set's clock its counts are as of.
  std::int64_t base_clock = 0;
  // Unused: keeps the state two whole lines (at 120 bytes most slots of an
  // array would straddle three).
  std::uint64_t padding_ = 0;
};
static_assert(sizeof(EngineRequestState) == 128, "a new field costs a third cache line per request: weigh it");

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
  // The next request to finish, as base::cache_lines: the heap's top, its
  // slot's admission number, the request, and what its submitter will read (after iterations_to_next_finish; none when empty).
  [[nodiscard]] std::array<std::uintptr_t, 5> next_finish_addresses() const;
  // Removes the live requests finished at the current clock, materialized, in admission order.
  void take_finished(std::vector<Request>& out);
  // Removes the newest live request, materialized (preemption).
  Request take_newest();
  // Removes every live request, materialized, in admission order.
  std::vector<Request> take_all();

  // Brings a request's counts (generated, fed, held KV, tokens by version) to the current clock.
  void materialize(Request& r) const;
  // Its counts now, without changing it.
  [[nodiscard]] std::int64_t generated_now(const Request& r) const;
  [[nodiscard]] std::int64_t feed_now(const Request& r) const;

  template <typename F>
  void for_each_live(F&& f) const {
    for (const auto& r : slots_) {
      if (!r.dead) f(r);
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

  [[nodiscard]] std::int64_t finish_clock(const Request& r) const;
  // Whether a heap entry is its slot's live request's (not one that has left).
  [[nodiscard]] bool is_live(const Finish& f) const;
  void drop_stale_finishes();
  // The finish heap made again from the live requests alone.
  void rebuild_finishes();
  void compact();

  std::int64_t clock_ = 0;
  std::vector<Request> slots_;  // in admission order; dead ones until compaction
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
  FinishHeap finishes_;  // stale entries skipped
  std::size_t stale_finishes_ = 0;  // entries of preempted requests still in finishes_
  std::vector<VersionMark> marks_;  // the version from each clock on, in clock order
  std::vector<Finish> finished_;  // scratch
};

}  // namespace april::sim
