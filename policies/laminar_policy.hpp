#pragma once
// Laminar's trajectory-level asynchrony (Sheng et al., "Laminar: A Scalable
// Asynchronous RL Post-Training Framework", arXiv 2510.12633, sections 3-6),
// on a disaggregated cluster:
//  - each engine generates its own batch of groups (`laminar.engine_batch_groups`,
//    0: B / engines, rounded up), pinned to it, with the version it holds:
//    no trajectory mixes versions and none is interrupted (section 6);
//  - the trainer trains on the first B complete groups queued (the paper's
//    default FIFO sampler, its Table 3) whenever it is idle, then publishes
//    the version to the relays: the trainer waits for the sync time, the
//    engines go on (section 4.2);
//  - an engine whose batch is done loads the version published last from its
//    host's relay (`sync.relay_pull_s`) when it holds an older one, then
//    starts its next batch (sections 3.1 and 5: a rollout takes the newest
//    weights once its batch is done or the repack has emptied it).
//
// Where this is a simplification of the paper, said here once:
//  - The dynamic repack (section 5, Algorithm 1) runs whenever a sample
//    finishes and after each publish: among engines of one version whose
//    requests all run (none waits) and are fewer than
//    `laminar.repack_below_requests` (the paper's roofline batch B; 0: no
//    repack), the smallest move whole to the fullest that stays under it
//    (best fit); an engine that received work is not a source (the paper's
//    pseudocode leaves that open). A moved request keeps its tokens and
//    re-prefills them (the paper does not say whether KV moves); the source,
//    empty, pulls or starts its next batch. The paper's candidates are also
//    those whose KV use falls; here a count of requests stands for it, and a
//    destination's KV is not checked (its engine queues what does not fit).
//  - The paper bounds no staleness; an experience buffer that grows without
//    bound is what a real system would not run, so an engine whose batch is
//    done starts the next only while fewer than `laminar.max_queued_batches`
//    x B complete groups wait for the trainer, else it idles until a train
//    step takes some (our addition).
//  - Simulator only: the live backend has one engine and HTTP servers have no
//    relays; the loop refuses it there by name.
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/registry.hpp"

namespace april::policies {

struct LaminarParams {
  std::int64_t engine_batch_groups = 0;  // 0: ceil(B / engines)
  std::int64_t max_queued_batches = 2;
  std::int64_t repack_below_requests = 64;  // 0: no repack
};

class LaminarPolicy final : public Policy {
 public:
  explicit LaminarPolicy(LaminarParams p) : p_(p) {}
  Decisions on_step_start(const RolloutView& view) override;
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override;
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override;
  Decisions on_train_end(const RolloutView& view) override;
  Decisions on_sync_end(const RolloutView& view) override;
  Decisions on_engines_pulled(const RolloutView& view, const std::vector<std::int32_t>& engines) override;
  SubmissionPlan plan_submissions(const RolloutView& view, const std::vector<Submission>& submissions) override;
  [[nodiscard]] bool wants_sample_events() const override { return p_.repack_below_requests > 0; }
  Decisions on_samples_finished(const RolloutView& view, const std::vector<SampleRef>& finished,
                                const std::vector<SampleRef>& chunk_ended) override;
  [[nodiscard]] bool overlaps() const override { return true; }
  [[nodiscard]] bool publishes_to_relays() const override { return true; }
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override {
    // Queued for training, one batch training, and the engines' batches in flight (about B).
    return (p_.max_queued_batches + 2) * batch_size + batch_size;
  }

 private:
  struct EngineState {
    std::int64_t version = 0;
    std::int64_t outstanding_groups = 0;
    std::int64_t unfinished_samples = 0;
    bool pulling = false, parked = false;
  };
  // The engine's batch is done: pull, start the next batch, or park.
  void next_for(const RolloutView& view, std::int32_t engine, Decisions& d);
  void start_batch(std::int32_t engine, Decisions& d);
  void train_if_ready(const RolloutView& view, Decisions& d) const;
  Decisions on_group_done(const RolloutView& view, GroupId group, bool accepted);
  [[nodiscard]] std::int64_t batch_groups() const;
  // Algorithm 1's best-fit consolidation over the engines as they stand.
  void repack(const RolloutView& view, Decisions& d);

  LaminarParams p_;
  std::int64_t batch_size_ = 1;
  std::vector<EngineState> engines_;
  std::deque<std::int32_t> unassigned_;  // per fresh group decided, in order: the engine it is for
  std::unordered_map<GroupId, std::int32_t> group_engine_;
};

PolicyEntry laminar_policy_entry();

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::IntKey kLaminarEngineBatchGroups{"laminar.engine_batch_groups"};
inline constexpr base::IntKey kLaminarMaxQueuedBatches{"laminar.max_queued_batches"};
inline constexpr base::IntKey kLaminarRepackBelowRequests{"laminar.repack_below_requests"};
}  // namespace keys

}  // namespace april::policies
