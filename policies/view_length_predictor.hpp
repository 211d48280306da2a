#pragma once
// A LengthPredictor fed from what the loop shows a policy (RolloutView):
// each complete group's lengths, learned once per group (a complete group
// returned unbatched completes again when resubmitted), and predictions for
// one instant's submissions from their prompts' history and finished
// siblings. Shared by the policies that dispatch by predicted length
// (length_aware, streamrl's history predictor).
#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "policies/length_predictor.hpp"
#include "policies/policy.hpp"

namespace april::policies {

class ViewLengthPredictor {
 public:
  explicit ViewLengthPredictor(std::size_t history_per_prompt) : predictor_(history_per_prompt) {}

  void learn(const RolloutView& view, GroupId group);
  // Per submission, its predicted total length (more than it holds); 0
  // where nothing has been observed yet.
  [[nodiscard]] std::vector<std::int64_t> predict_totals(const RolloutView& view, const std::vector<Submission>& subs) const;

  [[nodiscard]] const LengthPredictor& predictor() const { return predictor_; }

 private:
  LengthPredictor predictor_;
  std::unordered_set<GroupId> learned_;
};

}  // namespace april::policies
