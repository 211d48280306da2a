#pragma once
// Seer's context-aware scheduling (Qin et al., "Seer: Online Context
// Learning for Fast Synchronous LLM Reinforcement Learning", arXiv
// 2511.14617 v3, section 4.2 and Appendix Algorithm 2), on top of a
// synchronous policy (`seer.base`: sync or april), which decides what to
// submit, when the batch is complete and what to train.
//
// Seer keeps every request in one global buffer and hands one to an
// instance whenever the instance has room. This policy does the same through
// the dispatch queue of the contract (SubmissionPlan::hold, Decisions::
// release): it sends samples while the engines' running requests are below
// their cap (RolloutView::engine_slots) and holds the rest, then sends the
// next one each time a sample finishes. Which one (`seer.scheduling`):
//  - context_aware (Seer): each group's first unfinished sample is its
//    speculative probe. Probes go first, fewest generated tokens first
//    (Seer's shortest-first, SFS); then the other samples, group by group,
//    longest estimate first (approximate longest-first, LFS). A group's
//    estimate is the longest of its finished samples, learned online from
//    what the engines return; with none finished it is the length cap, so
//    groups still unknown go before every known one. Ties: submission order.
//  - fifo: the same pool in submission order: the load balancing of Seer's
//    global buffer alone, without the length context.
//
// Divided rollout (`seer.chunk_tok` > 0): every request asks for at most
// that many tokens; a sample whose chunk ends goes back to the pool with its
// tokens and is sent again by the same rule (a probe stays a probe, ranked
// by the tokens it has, so the probes take turns; another sample goes first
// in its group's queue), to whichever engine has room. With
// `seer.chunk_kv=pool` its KV follows it (Seer's Mooncake cache: the next
// chunk prefills nothing, and the transfer is not charged); `reprefill`
// prefills prompt + tokens again, the cost without a global cache.
//
// Where this is a simplification of the paper, said here once:
//  - Chunks run in the simulator, on the live engine (which re-prefills
//    each) and over HTTP (each chunk a new request, its context left to the
//    server's prefix cache). The paper gives no chunk size (an awesome-list's summary says 8K): the
//    default, 0, sends whole requests.
//  - Its placement also weighs cached prefixes and KV usage (OSDI version);
//    here the simulator's router takes the engine with the fewest requests.
//  - The paper "occasionally schedules requests from underserved groups to
//    avoid starvation", with no rule given: not modelled.
//  - Adaptive grouped speculative decoding is a faster engine, not a
//    schedule: not modelled (the engine's iteration model is unchanged).
//  - Room is counted in requests against the engines' cap, not in KV
//    blocks; with no cap (engine.max_running=0) nothing is held and only
//    the order of one instant's submissions follows the priority.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/policy_decorator.hpp"
#include "policies/registry.hpp"

namespace april::policies {

enum class SeerScheduling { ContextAware, Fifo };

class SeerPolicy final : public PolicyDecorator {
 public:
  SeerPolicy(std::unique_ptr<Policy> base, SeerScheduling scheduling, std::int32_t chunk_tok = 0, bool chunk_keeps_kv = true);

  Decisions on_step_start(const RolloutView& view) override;
  [[nodiscard]] bool wants_sample_events() const override { return true; }
  Decisions on_samples_finished(const RolloutView& view, const std::vector<SampleRef>& finished,
                                const std::vector<SampleRef>& chunk_ended) override;
  [[nodiscard]] std::int32_t chunk_tok() const override { return chunk_tok_; }
  [[nodiscard]] bool chunk_keeps_kv() const override { return chunk_keeps_kv_; }
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  SubmissionPlan plan_submissions(const RolloutView& view, const std::vector<Submission>& submissions) override;
  [[nodiscard]] bool overlaps() const override { return false; }

  // A group's length estimate in tokens; nullopt while none of its samples
  // has finished (Seer starts it at the length cap). For tests.
  [[nodiscard]] std::optional<std::int64_t> estimate_tok(GroupId group) const;

 private:
  static constexpr std::int64_t kUnknown = INT64_MAX;

  struct GroupQueue {
    std::int64_t estimate_tok = kUnknown;
    std::int64_t seq = 0;           // when this policy first saw it: ties between groups
    bool probe_sent = false;        // its probe has been picked this phase
    std::int32_t probe = -1;        // which sample that is
    std::deque<std::int32_t> held;  // its other samples waiting in the pool, by index
  };
  // The order keys: probes by (generated tokens, arrival), the others by
  // group, (-estimate, group seq, group).
  using ProbeKey = std::tuple<std::int32_t, std::int64_t, GroupId, std::int32_t>;
  using RestKey = std::tuple<std::int64_t, std::int64_t, GroupId>;

  GroupQueue& queue_of(const RolloutView& view, GroupId group);
  void add_to_pool(GroupQueue& q, GroupId group, const Submission& s);
  [[nodiscard]] RestKey rest_key(GroupId group, const GroupQueue& q) const;
  // The next sample to send by the scheduling rule; nullopt when the pool is empty.
  std::optional<SampleRef> pop_next();
  // How many more samples the engines have room for; INT64_MAX with no cap.
  [[nodiscard]] static std::int64_t room(const RolloutView& view, std::int64_t sending);

  SeerScheduling scheduling_;
  std::int32_t chunk_tok_ = 0;
  bool chunk_keeps_kv_ = true;
  std::unordered_map<GroupId, GroupQueue> groups_;
  std::set<ProbeKey> probes_;
  std::set<RestKey> rest_;
  std::int64_t next_seq_ = 0;
};

PolicyEntry seer_policy_entry();

namespace keys {
inline constexpr base::StringKey kSeerBase{"seer.base"};
inline constexpr base::StringKey kSeerScheduling{"seer.scheduling"};
inline constexpr base::IntKey kSeerChunkTok{"seer.chunk_tok"};
inline constexpr base::StringKey kSeerChunkKv{"seer.chunk_kv"};
}  // namespace keys

}  // namespace april::policies
