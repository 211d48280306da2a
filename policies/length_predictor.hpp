#pragma once
// Predicts how long a sample will run from what a real system observes: the
// lengths its prompt produced in earlier rollouts (lengths repeat from one
// epoch to the next: RhymeRL, Seer) and the lengths of its group's siblings
// that have finished. Never the sample's own length to come.
//
// The estimate for a sample that has generated g tokens and not finished is
// E[L | L > g] under the empirical distribution of those lengths: the mean of
// the observed lengths above g. Conditioning matters: the siblings that have
// finished are the short ones, and a sample still running at g is longer
// than g. When nothing observed is above g the sample has outlived
// everything seen, and the estimate is 2g, the conditional mean of a Pareto
// tail of index 2 (what the long-tail lengths look like past the bulk).
// A prompt seen for the first time, with no finished sibling, is predicted
// from the last `prior_size` lengths seen on any prompt.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace april::policies {

class LengthPredictor {
 public:
  explicit LengthPredictor(std::size_t history_per_prompt = 16, std::size_t prior_size = 1024);

  // A finished sample's length, recorded once, when its group completes.
  void record(const std::string& prompt_id, std::int32_t length_tok);

  // Predicted total length, > generated_tok, of a sample of `prompt_id` that
  // has generated `generated_tok` tokens and not finished, given the lengths
  // of its finished siblings. 0 when nothing has been observed at all.
  [[nodiscard]] std::int64_t predict_total_tok(const std::string& prompt_id, const std::vector<std::int32_t>& finished_siblings_tok,
                                               std::int32_t generated_tok) const;

  [[nodiscard]] std::size_t prompts_seen() const { return by_prompt_.size(); }

 private:
  std::size_t history_per_prompt_, prior_size_;
  std::unordered_map<std::string, std::deque<std::int32_t>> by_prompt_;  // newest last
  std::deque<std::int32_t> prior_;                                       // any prompt, newest last
  // prior_ sorted and its suffix sums (prior_suffix_tok_[i]: the lengths from i on), rebuilt when read after a change.
  mutable std::vector<std::int32_t> prior_sorted_;
  mutable std::vector<std::int64_t> prior_suffix_tok_;
  mutable bool prior_dirty_ = false;
};

}  // namespace april::policies
