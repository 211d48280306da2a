#pragma once
// The groups the loop holds, by id. Ids come from one counter in submission
// order and a group leaves within a few steps of its id, so the live ids fill
// a window [base, base + size) and a group sits at id - base in one deque:
// no hashing and no node per group, and consecutive groups lie side by side
// (a 4,096-GPU run holds some 10^5 groups, well past the caches; issue: a
// per-completion cost flat as the cluster grows). A deque keeps references
// valid while the window grows or shrinks at its ends, as the map did.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>

#include "policies/policy.hpp"

namespace april::rl {

template <typename Group>
class GroupStore {
 public:
  // The widest window of ids it holds (16.8M slots, a few GB): a loop never
  // comes near it (a step's groups leave within a few steps); a checkpoint
  // that asks for more is refused by its reader before it gets here.
  static constexpr policies::GroupId kMaxSpan = policies::GroupId{1} << 24;

  // Whether storing `id` keeps the window within kMaxSpan.
  [[nodiscard]] bool fits(policies::GroupId id) const {
    if (slots_.empty()) return true;
    const policies::GroupId lo = std::min(id, base_);
    const policies::GroupId hi = std::max(id, base_ + static_cast<policies::GroupId>(slots_.size()) - 1);
    return hi - lo < kMaxSpan;
  }

  // The group with this id, or nullptr.
  Group* find(policies::GroupId id) {
    if (id < base_ || id - base_ >= static_cast<policies::GroupId>(slots_.size())) return nullptr;
    Group& g = slots_[static_cast<std::size_t>(id - base_)];
    return g.id == id ? &g : nullptr;
  }
  const Group* find(policies::GroupId id) const { return const_cast<GroupStore*>(this)->find(id); }

  // Stores `g` under g.id, which must not be held already.
  Group& emplace(Group&& g) {
    const policies::GroupId id = g.id;
    if (id < 0) throw std::logic_error("a group id is never negative");
    if (!fits(id)) throw std::length_error("group ids held at once span more than 2^24 ids");
    if (slots_.empty()) base_ = id;
    while (id < base_) {
      slots_.emplace_front();
      --base_;
    }
    while (id - base_ >= static_cast<policies::GroupId>(slots_.size())) slots_.emplace_back();
    Group& slot = slots_[static_cast<std::size_t>(id - base_)];
    if (slot.id == id) throw std::logic_error("a group id stored twice");
    slot = std::move(g);
    ++size_;
    return slot;
  }

  // Drops the group with this id, if held.
  void erase(policies::GroupId id) {
    Group* g = find(id);
    if (g == nullptr) return;
    *g = Group{};  // id -1: an empty slot, its vectors freed
    --size_;
    while (!slots_.empty() && slots_.front().id < 0) {
      slots_.pop_front();
      ++base_;
    }
    while (!slots_.empty() && slots_.back().id < 0) slots_.pop_back();
  }

  void clear() {
    slots_.clear();
    size_ = 0;
  }
  [[nodiscard]] std::size_t size() const { return size_; }

  // Every held group, in id order.
  template <typename F>
  void for_each(F&& f) {
    for (Group& g : slots_) {
      if (g.id >= 0) f(g);
    }
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Group& g : slots_) {
      if (g.id >= 0) f(g);
    }
  }

 private:
  std::deque<Group> slots_;  // slot i holds id base_ + i, or an empty group (id -1)
  policies::GroupId base_ = 0;
  std::size_t size_ = 0;
};

}  // namespace april::rl
