#pragma once
// A d-ary min-heap of small plain entries whose sibling groups each fill one
// `LineBytes` block, aligned: a level of a sift costs one cache line, and the
// arity is what a line holds (four 16-byte entries, eight 8-byte ones), so
// the heap is as shallow as a line allows. Popped in Floyd's order. The
// engines' finish heaps keep one each: a pop's levels are dependent loads, each a miss at
// 4,096 GPUs, so every level saved is a miss saved. (The event queue kept
// one too, until a tournament over its slots, whose loads do not depend on
// each other, beat it: sim/event_queue.hpp.)
// `Before(a, b)`: a comes out first. Entries are unique under it, so the pop
// order is the one any heap gives.
#include <cstddef>
#include <vector>

#include "base/aligned_allocator.hpp"

namespace april::sim {

template <typename T, typename Before, std::size_t LineBytes>
class LineHeap {
 public:
  static_assert(sizeof(T) <= LineBytes && LineBytes % sizeof(T) == 0, "entries must tile a line");
  static constexpr std::size_t kArity = LineBytes / sizeof(T);
  static_assert(kArity >= 2, "a line must hold two entries at least");

  LineHeap() : v_(kPad) {}

  [[nodiscard]] bool empty() const { return v_.size() == kPad; }
  [[nodiscard]] std::size_t size() const { return v_.size() - kPad; }
  [[nodiscard]] const T& top() const { return v_[kPad]; }

  void push(const T& e) {
    v_.push_back(e);
    sift_up_from(size() - 1, e);
  }
  // Floyd's order: the hole left at the top walks down to a leaf along the
  // earliest children (one choice per level, no comparison with the moved
  // entry), then the last entry fills it and climbs, rarely more than a level.
  void pop() {
    const T e = v_.back();
    v_.pop_back();
    const std::size_t n = size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t best = first + kArity <= n ? earliest_of_line(first) : earliest_of_few(first, n);
      at(i) = at(best);
      i = best;
    }
    sift_up_from(i, e);
  }
  void clear() { v_.resize(kPad); }
  // Adds an entry without ordering; call heapify() before the next top or pop.
  void add_unordered(const T& e) { v_.push_back(e); }
  void heapify() {
    const std::size_t n = size();
    if (n < 2) return;
    for (std::size_t i = (n - 2) / kArity + 1; i-- > 0;) sift_down(i);
  }

 private:
  // Logical entry i sits at v_[i + kPad]: the children of i, d*i + 1 .. d*i + d,
  // then start at a multiple of d entries (one line) from the aligned base.
  static constexpr std::size_t kPad = kArity - 1;

  T& at(std::size_t i) { return v_[i + kPad]; }
  static bool before(const T& a, const T& b) { return Before{}(a, b); }

  void sift_up_from(std::size_t i, const T e) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(e, at(parent))) break;
      at(i) = at(parent);
      i = parent;
    }
    at(i) = e;
  }
  // The earliest of the d siblings from `first`: a tournament of selects,
  // which a branch predictor cannot get wrong.
  std::size_t earliest_of_line(std::size_t first) {
    std::size_t win[kArity];
    for (std::size_t k = 0; k < kArity; ++k) win[k] = first + k;
    for (std::size_t width = kArity; width > 1; width /= 2) {
      for (std::size_t k = 0; k < width / 2; ++k) {
        const std::size_t a = win[2 * k], b = win[2 * k + 1];
        // A mask, not a branch or a ternary the compiler may make one.
        win[k] = a ^ ((a ^ b) & (std::size_t{0} - static_cast<std::size_t>(before(at(b), at(a)))));
      }
    }
    return win[0];
  }
  std::size_t earliest_of_few(std::size_t first, std::size_t n) {
    std::size_t best = first;
    for (std::size_t c = first + 1; c < n; ++c) best = before(at(c), at(best)) ? c : best;
    return best;
  }
  void sift_down(std::size_t i) {
    const std::size_t n = size();
    const T e = at(i);
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t best = first + kArity <= n ? earliest_of_line(first) : earliest_of_few(first, n);
      if (!before(at(best), e)) break;
      at(i) = at(best);
      i = best;
    }
    at(i) = e;
  }

  std::vector<T, base::AlignedAllocator<T, LineBytes>> v_;
};

}  // namespace april::sim
