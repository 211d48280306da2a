#pragma once
// The router's index over engines: each engine's load, and the engine with
// the least, ties to the lowest index (the rule a scan from the front gives),
// in O(log engines) per change and O(1) per query. A segment tree over
// (load, index) pairs: a submission at 4,096 GPUs no longer scans every engine.
// Each node packs its pair in one word, the load above the index, so that a
// node is one integer compare and the tree half the bytes of a tree of pairs
// (every completion and submission climbs it).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace april::adapters {

class LeastLoaded {
 public:
  static constexpr unsigned kIndexBits = 24;
  static constexpr std::size_t kMaxEngines = std::size_t{1} << kIndexBits;
  // A load above this is refused rather than wrapped into the index bits.
  static constexpr std::int64_t kMaxLoad = (std::int64_t{1} << (64 - kIndexBits - 1)) - 1;

  explicit LeastLoaded(std::size_t engines) {
    if (engines > kMaxEngines) throw std::invalid_argument("the router indexes at most 2^24 engines");
    while (leaves_ < engines) leaves_ *= 2;
    // Unused leaves never win: the largest word, past every real pair.
    tree_.assign(2 * leaves_, UINT64_MAX);
    for (std::size_t i = 0; i < engines; ++i) tree_[leaves_ + i] = pack(0, i);
    for (std::size_t n = leaves_ - 1; n >= 1; --n) tree_[n] = std::min(tree_[2 * n], tree_[2 * n + 1]);
  }

  void set(std::size_t engine, std::int64_t load) {
    if (load < 0 || load > kMaxLoad) throw std::out_of_range("engine load outside what the router indexes");
    std::size_t n = leaves_ + engine;
    const std::uint64_t key = pack(load, engine);
    if (tree_[n] == key) return;
    tree_[n] = key;
    // Up to the first node whose least is unchanged: the nodes above it are too.
    for (n /= 2; n >= 1; n /= 2) {
      const std::uint64_t least = std::min(tree_[2 * n], tree_[2 * n + 1]);
      if (least == tree_[n]) break;
      tree_[n] = least;
    }
  }

  [[nodiscard]] std::int64_t load(std::size_t engine) const { return static_cast<std::int64_t>(tree_[leaves_ + engine] >> kIndexBits); }
  // The least-loaded engine; among equals, the lowest index.
  [[nodiscard]] std::size_t least() const { return static_cast<std::size_t>(tree_[1] & (kMaxEngines - 1)); }
  // The least-loaded engine of [first, last), same tie rule, in O(log
  // engines): the minimum over the nodes that tile the range.
  [[nodiscard]] std::size_t least_in(std::size_t first, std::size_t last) const {
    if (first >= last || last > leaves_) throw std::out_of_range("engine range outside the router's");
    std::uint64_t best = UINT64_MAX;
    for (std::size_t lo = first + leaves_, hi = last + leaves_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1U) best = std::min(best, tree_[lo++]);
      if (hi & 1U) best = std::min(best, tree_[--hi]);
    }
    return static_cast<std::size_t>(best & (kMaxEngines - 1));
  }

 private:
  static std::uint64_t pack(std::int64_t load, std::size_t engine) {
    return (static_cast<std::uint64_t>(load) << kIndexBits) | static_cast<std::uint64_t>(engine);
  }

  std::size_t leaves_ = 1;
  std::vector<std::uint64_t> tree_;  // node n's children: 2n, 2n+1; leaves from leaves_
};

}  // namespace april::adapters
