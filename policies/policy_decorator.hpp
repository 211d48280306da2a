#pragma once
// A policy on top of another: every decision and property is the base's
// unless the decorator overrides it. A decorator writes only what it adds
// (LengthAwarePolicy: admission order, routing and what it learns from
// complete groups), and a virtual added to Policy is forwarded here once.
#include <memory>
#include <utility>
#include <vector>

#include "policies/policy.hpp"

namespace april::policies {

class PolicyDecorator : public Policy {
 public:
  explicit PolicyDecorator(std::unique_ptr<Policy> base) : base_(std::move(base)) {}

  Decisions on_step_start(const RolloutView& view) override { return base_->on_step_start(view); }
  [[nodiscard]] bool wants_sample_events() const override { return base_->wants_sample_events(); }
  Decisions on_samples_finished(const RolloutView& view, const std::vector<SampleRef>& finished,
                                const std::vector<SampleRef>& chunk_ended) override {
    return base_->on_samples_finished(view, finished, chunk_ended);
  }
  [[nodiscard]] std::int32_t chunk_tok() const override { return base_->chunk_tok(); }
  [[nodiscard]] bool chunk_keeps_kv() const override { return base_->chunk_keeps_kv(); }
  Decisions on_group_accepted(const RolloutView& view, GroupId group) override { return base_->on_group_accepted(view, group); }
  Decisions on_group_rejected(const RolloutView& view, GroupId group) override { return base_->on_group_rejected(view, group); }
  SubmissionPlan plan_submissions(const RolloutView& view, const std::vector<Submission>& submissions) override {
    return base_->plan_submissions(view, submissions);
  }
  [[nodiscard]] std::int64_t mask_tokens_staler_than() const override { return base_->mask_tokens_staler_than(); }
  [[nodiscard]] bool overlaps() const override { return base_->overlaps(); }
  Decisions on_train_end(const RolloutView& view) override { return base_->on_train_end(view); }
  [[nodiscard]] std::int64_t train_local_steps() const override { return base_->train_local_steps(); }
  Decisions on_sync_end(const RolloutView& view) override { return base_->on_sync_end(view); }
  [[nodiscard]] bool recompute_on_update() const override { return base_->recompute_on_update(); }
  [[nodiscard]] bool publishes_to_relays() const override { return base_->publishes_to_relays(); }
  Decisions on_engines_pulled(const RolloutView& view, const std::vector<std::int32_t>& engines) override {
    return base_->on_engines_pulled(view, engines);
  }
  [[nodiscard]] bool lends_trainer_gpus() const override { return base_->lends_trainer_gpus(); }
  Decisions on_trainer_lent(const RolloutView& view) override { return base_->on_trainer_lent(view); }
  Decisions on_trainer_reclaimed(const RolloutView& view) override { return base_->on_trainer_reclaimed(view); }
  [[nodiscard]] std::int64_t resident_groups_bound(std::int64_t batch_size) const override {
    return base_->resident_groups_bound(batch_size);
  }

 private:
  std::unique_ptr<Policy> base_;
};

}  // namespace april::policies
