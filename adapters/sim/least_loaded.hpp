#pragma once
// The router's index over engines: each engine's load, and the engine with
// the least, ties to the lowest index (the rule a scan from the front gives),
// in O(log engines) per change and O(1) per query. A segment tree over
// (load, index) pairs: a submission at 4,096 GPUs no longer scans every engine.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace april::adapters {

class LeastLoaded {
 public:
  explicit LeastLoaded(std::size_t engines) {
    while (leaves_ < engines) leaves_ *= 2;
    // Unused leaves never win: the largest load, past every real index.
    tree_.assign(2 * leaves_, {INT64_MAX, SIZE_MAX});
    for (std::size_t i = 0; i < engines; ++i) tree_[leaves_ + i] = {0, i};
    for (std::size_t n = leaves_ - 1; n >= 1; --n) tree_[n] = std::min(tree_[2 * n], tree_[2 * n + 1]);
  }

  void set(std::size_t engine, std::int64_t load) {
    std::size_t n = leaves_ + engine;
    if (tree_[n].first == load) return;
    tree_[n].first = load;
    // Up to the first node whose least is unchanged: the nodes above it are too.
    for (n /= 2; n >= 1; n /= 2) {
      const auto least = std::min(tree_[2 * n], tree_[2 * n + 1]);
      if (least == tree_[n]) break;
      tree_[n] = least;
    }
  }

  [[nodiscard]] std::int64_t load(std::size_t engine) const { return tree_[leaves_ + engine].first; }
  // The least-loaded engine; among equals, the lowest index.
  [[nodiscard]] std::size_t least() const { return tree_[1].second; }

 private:
  std::size_t leaves_ = 1;
  std::vector<std::pair<std::int64_t, std::size_t>> tree_;  // node n's children: 2n, 2n+1; leaves from leaves_
};

}  // namespace april::adapters
