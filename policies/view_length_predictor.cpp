#include "policies/view_length_predictor.hpp"

#include <string>

namespace april::policies {

void ViewLengthPredictor::learn(const RolloutView& view, GroupId group) {
  if (!learned_.insert(group).second) return;
  const std::string& prompt = view.prompt_id(group);
  for (const SampleState& s : view.group_samples(group)) predictor_.record(prompt, s.generated_tok);
}

std::vector<std::int64_t> ViewLengthPredictor::predict_totals(const RolloutView& view, const std::vector<Submission>& subs) const {
  std::vector<std::int64_t> total;
  total.reserve(subs.size());
  GroupId cached_group = -1;
  std::vector<std::int32_t> siblings;
  for (const Submission& s : subs) {
    if (s.group != cached_group) {  // a group's samples come together: its siblings once
      cached_group = s.group;
      siblings.clear();
      for (const SampleState& st : view.group_samples(s.group)) {
        if (st.finished) siblings.push_back(st.generated_tok);
      }
    }
    total.push_back(predictor_.predict_total_tok(view.prompt_id(s.group), siblings, s.generated_tok));
  }
  return total;
}

}  // namespace april::policies
