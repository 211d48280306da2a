#pragma once
// An engine's pending finishes, earliest first: a 4-ary min-heap whose
// entries are 32 bytes and whose sibling groups start on a 128-byte boundary,
// so a level of a sift costs two adjacent cache lines and a heap of 256
// finishes is 4 levels deep, not 8 (a binary heap of 40-byte entries touched
// two to three lines a level; at 4,096 GPUs its sifts were the largest cost
// of a completion: issue "per-completion cost flat as the cluster grows").
// Entries are ordered by (clock, key); keys are unique, so the pop order is
// the one any heap gives.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/aligned_allocator.hpp"

namespace april::sim {

struct FinishEntry {
  std::int64_t clock = 0;
  std::uint64_t key = 0;  // unique among the entries held
  std::array<std::uintptr_t, 2> touched{};  // a prefetch hint carried with it
  // Without branches: which of two finishes is earlier is a coin toss to the predictor.
  [[nodiscard]] bool before(const FinishEntry& o) const {
    return static_cast<bool>(static_cast<int>(clock < o.clock) | (static_cast<int>(clock == o.clock) & static_cast<int>(key < o.key)));
  }
};
static_assert(sizeof(FinishEntry) == 32, "four siblings must fill two cache lines");

class FinishHeap {
 public:
  FinishHeap() : v_(kPad) {}

  [[nodiscard]] bool empty() const { return v_.size() == kPad; }
  [[nodiscard]] std::size_t size() const { return v_.size() - kPad; }
  [[nodiscard]] const FinishEntry& top() const { return v_[kPad]; }

  void push(const FinishEntry& e) {
    v_.push_back(e);
    sift_up(size() - 1);
  }
  // Floyd's order: the hole left at the top walks down to a leaf along the
  // earliest children (one choice per level, no comparison with the moved
  // entry), then the last entry fills it and climbs, rarely more than a level.
  void pop() {
    const FinishEntry e = v_.back();
    v_.pop_back();
    const std::size_t n = size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t best = first + kArity <= n ? earliest_of_four(first) : earliest_of_few(first, n);
      at(i) = at(best);
      i = best;
    }
    sift_up_from(i, e);
  }
  void clear() { v_.resize(kPad); }
  // Adds an entry without ordering; call heapify() before the next top or pop.
  void add_unordered(const FinishEntry& e) { v_.push_back(e); }
  void heapify() {
    const std::size_t n = size();
    if (n < 2) return;
    for (std::size_t i = (n - 2) / kArity + 1; i-- > 0;) sift_down(i);
  }

 private:
  static constexpr std::size_t kArity = 4;
  // Logical entry i sits at v_[i + kPad]: the children of i, 4i + 1 .. 4i + 4,
  // then start at a multiple of 4 entries, 128 bytes, from the aligned base.
  static constexpr std::size_t kPad = kArity - 1;

  FinishEntry& at(std::size_t i) { return v_[i + kPad]; }

  void sift_up(std::size_t i) { sift_up_from(i, at(i)); }
  void sift_up_from(std::size_t i, const FinishEntry e) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!e.before(at(parent))) break;
      at(i) = at(parent);
      i = parent;
    }
    at(i) = e;
  }
  // The earliest of the four siblings from `first` (a tournament of selects).
  std::size_t earliest_of_four(std::size_t first) {
    const std::size_t a = at(first + 1).before(at(first)) ? first + 1 : first;
    const std::size_t b = at(first + 3).before(at(first + 2)) ? first + 3 : first + 2;
    return at(b).before(at(a)) ? b : a;
  }
  std::size_t earliest_of_few(std::size_t first, std::size_t n) {
    std::size_t best = first;
    for (std::size_t c = first + 1; c < n; ++c) best = at(c).before(at(best)) ? c : best;
    return best;
  }
  void sift_down(std::size_t i) {
    const std::size_t n = size();
    const FinishEntry e = at(i);
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t best = first + kArity <= n ? earliest_of_four(first) : earliest_of_few(first, n);
      if (!at(best).before(e)) break;
      at(i) = at(best);
      i = best;
    }
    at(i) = e;
  }

  std::vector<FinishEntry, base::AlignedAllocator<FinishEntry, 128>> v_;
};

}  // namespace april::sim
