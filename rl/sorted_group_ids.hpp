#pragma once
// A set of group ids held as a sorted vector: built and searched in
// contiguous memory. A step's batch and its accepted groups are thousands of
// ids at a large cluster's size, and a hash set of them allocated and freed a
// node per group, every step.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "policies/policy.hpp"

namespace april::rl {

class SortedGroupIds {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  template <typename Range>
  explicit SortedGroupIds(const Range& ids) : ids_(ids.begin(), ids.end()) {
    std::sort(ids_.begin(), ids_.end());
  }

  // Where `id` first sits among the sorted ids (the same place for every copy
  // of it, so a flag per place tells a repeat), or npos.
  [[nodiscard]] std::size_t find(policies::GroupId id) const {
    const auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    return it != ids_.end() && *it == id ? static_cast<std::size_t>(it - ids_.begin()) : npos;
  }
  [[nodiscard]] bool contains(policies::GroupId id) const { return find(id) != npos; }
  [[nodiscard]] std::size_t size() const { return ids_.size(); }

 private:
  std::vector<policies::GroupId> ids_;
};

}  // namespace april::rl
