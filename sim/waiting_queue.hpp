#pragma once
// An engine's waiting requests, in the order they are admitted: those put
// back at the front (preempted, or dropping their KV at a sync), last put
// back first, then the submissions in arrival order. The two ends live
// apart: the front in a vector used as a stack, the submissions in a
// ChunkFifo, which keeps its chunks where std::deque freed and allocated one
// every 4 requests.
// A KV-starved engine preempts its newest request and readmits it at nearly
// every boundary; in one std::deque each put-back at a node's edge allocated
// a node and its readmission freed it, so the request landed in fresh, cold
// memory each time (the allocator and that miss were a tenth of a 1,024-GPU
// tune's small splits). The stack keeps its capacity, so the put-back request stays hot.
#include <cstddef>
#include <utility>
#include <vector>

#include "sim/chunk_fifo.hpp"

namespace april::sim {

template <typename T>
class WaitingQueue {
 public:
  [[nodiscard]] bool empty() const { return front_.empty() && back_.empty(); }
  [[nodiscard]] std::size_t size() const { return front_.size() + back_.size(); }
  [[nodiscard]] T& front() { return front_.empty() ? back_.front() : front_.back(); }
  [[nodiscard]] const T& front() const { return front_.empty() ? back_.front() : front_.back(); }

  void push_back(T value) { back_.push_back(std::move(value)); }
  void push_front(T value) { front_.push_back(std::move(value)); }
  void pop_front() {
    if (front_.empty()) {
      back_.pop_front();
    } else {
      front_.pop_back();
    }
  }
  void clear() {
    front_.clear();
    back_.clear();
  }

  // Visits every waiting request in admission order.
  template <typename F>
  void for_each(F&& f) {
    for (auto it = front_.rbegin(); it != front_.rend(); ++it) f(*it);
    back_.for_each(f);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (auto it = front_.rbegin(); it != front_.rend(); ++it) f(*it);
    back_.for_each(f);
  }

 private:
  std::vector<T> front_;  // the front, last element first
  ChunkFifo<T> back_;
};

}  // namespace april::sim
