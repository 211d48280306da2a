#include "policies/length_predictor.hpp"

#include <algorithm>
#include <stdexcept>

namespace april::policies {

LengthPredictor::LengthPredictor(std::size_t history_per_prompt, std::size_t prior_size)
    : history_per_prompt_(history_per_prompt), prior_size_(prior_size) {
  if (history_per_prompt_ == 0 || prior_size_ == 0) throw std::invalid_argument("a length predictor needs room for at least one length");
}

void LengthPredictor::record(const std::string& prompt_id, std::int32_t length_tok) {
  auto& h = by_prompt_[prompt_id];
  h.push_back(length_tok);
  if (h.size() > history_per_prompt_) h.pop_front();
  prior_.push_back(length_tok);
  if (prior_.size() > prior_size_) prior_.pop_front();
  prior_dirty_ = true;
}

namespace {

// Sum and count of the lengths above g.
template <class Range>
void add_above(const Range& lengths, std::int32_t g, std::int64_t& sum, std::int64_t& count, std::int64_t& seen) {
  for (std::int32_t len : lengths) {
    ++seen;
    if (len > g) {
      sum += len;
      ++count;
    }
  }
}

}  // namespace

std::int64_t LengthPredictor::predict_total_tok(const std::string& prompt_id, const std::vector<std::int32_t>& finished_siblings_tok,
                                                std::int32_t generated_tok) const {
  std::int64_t sum = 0, count = 0, seen = 0;
  add_above(finished_siblings_tok, generated_tok, sum, count, seen);
  if (const auto it = by_prompt_.find(prompt_id); it != by_prompt_.end()) add_above(it->second, generated_tok, sum, count, seen);
  if (seen == 0 && !prior_.empty()) {
    // The prior is read far more often than it changes (every unseen
    // prompt's samples, at every decision): sorted, with suffix sums, it is
    // a binary search rather than a scan of its lengths.
    if (prior_dirty_) {
      prior_sorted_.assign(prior_.begin(), prior_.end());
      std::sort(prior_sorted_.begin(), prior_sorted_.end());
      prior_suffix_tok_.assign(prior_sorted_.size() + 1, 0);
      for (std::size_t i = prior_sorted_.size(); i-- > 0;) prior_suffix_tok_[i] = prior_suffix_tok_[i + 1] + prior_sorted_[i];
      prior_dirty_ = false;
    }
    const auto above = std::upper_bound(prior_sorted_.begin(), prior_sorted_.end(), generated_tok);
    const auto at = static_cast<std::size_t>(above - prior_sorted_.begin());
    seen = static_cast<std::int64_t>(prior_sorted_.size());
    count = static_cast<std::int64_t>(prior_sorted_.size() - at);
    sum = prior_suffix_tok_[at];
  }
  if (seen == 0) return 0;
  if (count == 0) return std::max<std::int64_t>(2 * static_cast<std::int64_t>(generated_tok), generated_tok + 1);
  // Rounded up: the mean of lengths above g is above g, and so stays the estimate.
  return (sum + count - 1) / count;
}

}  // namespace april::policies
