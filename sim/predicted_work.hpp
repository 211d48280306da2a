#pragma once
// The predicted tokens still to generate by a running set's requests that
// carry a prediction, kept as they come and go, so that a router's load
// index (Seer's least predicted work) costs O(log n) per change rather than
// a scan of every running request.
//
// A request admitted at clock b that first feeds f context tokens, with g
// tokens generated and a predicted end of p, generates one token per
// iteration from T0 = b + f on: at clock c it has max(1, p - g - max(0, c - T0))
// left (at least 1: a request past its prediction is still running). With
// K = p - g + T0 that is max(1, p - g) while c <= T0 and max(1, K - c) after.
// The clock only grows, so each request moves at most twice: from feeding
// to generating, and to "past its prediction" (1 each).
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>

namespace april::sim {

class PredictedWork {
 public:
  // A request with a prediction joins at `clock` (the set's current clock).
  void add(std::int64_t t0, std::int64_t k) {
    switch (where(t0, k)) {
      case Where::kFeeding:
        feeding_.emplace(t0, k);
        feeding_sum_ += feeding_value(t0, k);
        break;
      case Where::kGenerating:
        generating_.insert(k);
        generating_k_sum_ += k;
        break;
      case Where::kPast:
        ++past_;
        break;
    }
  }
  // The same request leaves (finished, preempted or taken).
  void remove(std::int64_t t0, std::int64_t k) {
    switch (where(t0, k)) {
      case Where::kFeeding: {
        const auto it = feeding_.find({t0, k});
        if (it == feeding_.end()) throw std::logic_error("predicted work: a request left that never came");
        feeding_.erase(it);
        feeding_sum_ -= feeding_value(t0, k);
        break;
      }
      case Where::kGenerating: {
        const auto it = generating_.find(k);
        if (it == generating_.end()) throw std::logic_error("predicted work: a request left that never came");
        generating_.erase(it);
        generating_k_sum_ -= k;
        break;
      }
      case Where::kPast:
        if (past_ == 0) throw std::logic_error("predicted work: a request left that never came");
        --past_;
        break;
    }
  }
  // The sum over the requests at `clock` (never below the last clock asked).
  [[nodiscard]] std::int64_t total_at(std::int64_t clock) {
    advance_to(clock);
    return feeding_sum_ + (generating_k_sum_ - static_cast<std::int64_t>(generating_.size()) * clock_) + past_;
  }

 private:
  enum class Where { kFeeding, kGenerating, kPast };
  static std::int64_t feeding_value(std::int64_t t0, std::int64_t k) { return k - t0 > 1 ? k - t0 : 1; }
  // Where a request is as of clock_: the sets hold that split, and a request
  // that leaves is found where its values put it then.
  [[nodiscard]] Where where(std::int64_t t0, std::int64_t k) const {
    if (t0 > clock_) return Where::kFeeding;
    return k > clock_ + 1 ? Where::kGenerating : Where::kPast;
  }
  void advance_to(std::int64_t clock) {
    if (clock <= clock_) return;
    clock_ = clock;
    while (!feeding_.empty() && feeding_.begin()->first <= clock_) {
      const auto [t0, k] = *feeding_.begin();
      feeding_.erase(feeding_.begin());
      feeding_sum_ -= feeding_value(t0, k);
      add(t0, k);
    }
    while (!generating_.empty() && *generating_.begin() <= clock_ + 1) {
      generating_k_sum_ -= *generating_.begin();
      generating_.erase(generating_.begin());
      ++past_;
    }
  }

  std::int64_t clock_ = 0;
  std::multiset<std::pair<std::int64_t, std::int64_t>> feeding_;  // (T0, K)
  std::int64_t feeding_sum_ = 0;                                  // their max(1, K - T0)
  std::multiset<std::int64_t> generating_;                        // K
  std::int64_t generating_k_sum_ = 0;
  std::int64_t past_ = 0;  // requests past their prediction, 1 each
};

}  // namespace april::sim
