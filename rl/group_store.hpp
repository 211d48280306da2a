#pragma once
// The groups the loop holds, by id. Ids come from one counter in submission
// order and a group leaves within a few steps of its id, so the live ids fill
// a window of ids, held in chunks of consecutive ids: finding a group is an
// index into a small table of chunks (hot in the cache) and one load, with no
// hashing and no node per group, and consecutive groups lie side by side (a
// 4,096-GPU run holds some 10^5 groups, well past the caches). Chunks never move, so
// references stay valid as the window grows or shrinks, as the map's did.
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>

#include "policies/policy.hpp"

namespace april::rl {

template <typename Group>
class GroupStore {
 public:
  // Groups per chunk: a chunk is allocated whole and freed once empty, and the
  // table of chunks stays small enough to live in the cache.
  static constexpr policies::GroupId kChunk = 256;
  // The widest window of ids it holds (16.8M slots, a few GB): a loop never
  // comes near it (a step's groups leave within a few steps); a checkpoint
  // that asks for more is refused by its reader before it gets here.
  static constexpr policies::GroupId kMaxSpan = policies::GroupId{1} << 24;

  // Whether storing `id` keeps the window of chunks within kMaxSpan ids.
  [[nodiscard]] bool fits(policies::GroupId id) const {
    if (chunks_.empty()) return true;
    const policies::GroupId c = id / kChunk;
    const policies::GroupId lo = std::min(c, first_), hi = std::max(c, first_ + static_cast<policies::GroupId>(chunks_.size()) - 1);
    return (hi - lo + 1) * kChunk <= kMaxSpan;
  }

  // The group with this id, or nullptr.
  Group* find(policies::GroupId id) {
    const policies::GroupId c = id / kChunk - first_;
    if (id < 0 || c < 0 || c >= static_cast<policies::GroupId>(chunks_.size())) return nullptr;
    Group& g = chunks_[static_cast<std::size_t>(c)]->groups[static_cast<std::size_t>(id % kChunk)];
    return g.id == id ? &g : nullptr;
  }
  const Group* find(policies::GroupId id) const { return const_cast<GroupStore*>(this)->find(id); }

  // Where the group with this id sits or would sit, without reading it (for
  // prefetching); 0 outside the window of chunks.
  [[nodiscard]] std::uintptr_t slot_address(policies::GroupId id) const {
    const policies::GroupId c = id / kChunk - first_;
    if (id < 0 || c < 0 || c >= static_cast<policies::GroupId>(chunks_.size())) return 0;
    return reinterpret_cast<std::uintptr_t>(&chunks_[static_cast<std::size_t>(c)]->groups[static_cast<std::size_t>(id % kChunk)]);
  }

  // Stores `g` under g.id, which must not be held already.
  Group& emplace(Group&& g) {
    const policies::GroupId id = g.id;
    if (id < 0) throw std::logic_error("a group id is never negative");
    if (!fits(id)) throw std::length_error("group ids held at once span more than 2^24 ids");
    const policies::GroupId c = id / kChunk;
    if (chunks_.empty()) first_ = c;
    while (c < first_) {
      chunks_.push_front(std::make_unique<Chunk>());
      --first_;
    }
    while (c - first_ >= static_cast<policies::GroupId>(chunks_.size())) chunks_.push_back(std::make_unique<Chunk>());
    Chunk& chunk = *chunks_[static_cast<std::size_t>(c - first_)];
    Group& slot = chunk.groups[static_cast<std::size_t>(id % kChunk)];
    if (slot.id == id) throw std::logic_error("a group id stored twice");
    slot = std::move(g);
    ++chunk.held;
    ++size_;
    return slot;
  }

  // Drops the group with this id, if held.
  void erase(policies::GroupId id) {
    Group* g = find(id);
    if (g == nullptr) return;
    *g = Group{};  // id -1: an empty slot, its vectors freed
    --chunks_[static_cast<std::size_t>(id / kChunk - first_)]->held;
    --size_;
    while (!chunks_.empty() && chunks_.front()->held == 0) {
      chunks_.pop_front();
      ++first_;
    }
    while (!chunks_.empty() && chunks_.back()->held == 0) chunks_.pop_back();
  }

  void clear() {
    chunks_.clear();
    size_ = 0;
  }
  [[nodiscard]] std::size_t size() const { return size_; }

  // Every held group, in id order.
  template <typename F>
  void for_each(F&& f) {
    for (auto& chunk : chunks_) {
      for (Group& g : chunk->groups) {
        if (g.id >= 0) f(g);
      }
    }
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& chunk : chunks_) {
      for (const Group& g : chunk->groups) {
        if (g.id >= 0) f(g);
      }
    }
  }

 private:
  struct Chunk {
    std::array<Group, kChunk> groups;  // slot i holds id (its chunk) x kChunk + i, or an empty group (id -1)
    std::size_t held = 0;
  };
  std::deque<std::unique_ptr<Chunk>> chunks_;  // chunk first_ + i; never moved, so references stay valid
  policies::GroupId first_ = 0;
  std::size_t size_ = 0;
};

}  // namespace april::rl
