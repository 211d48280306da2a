#pragma once
// A first-in first-out queue in chunks of about 2 KiB that it keeps: a chunk
// emptied at the front joins the queue's free chunks and is reused for the
// next chunk at the back, so a queue that fills and drains, step after step,
// allocates only for its first fill. std::deque frees and allocates a
// 512-byte node every 4 requests of 128 bytes; at 4,096 GPUs the allocator
// was about a twentieth of a run, and with one spare chunk kept, each step's
// refill of every engine's queue still allocated (and faulted in) its chunks
// anew. An idle queue holds the chunks of its fullest moment.
#include <cstddef>
#include <new>
#include <utility>

namespace april::sim {

template <typename T>
class ChunkFifo {
 public:
  static constexpr std::size_t kChunk = sizeof(T) >= 2048 ? 1 : 2048 / sizeof(T);

  ChunkFifo() = default;
  ChunkFifo(const ChunkFifo&) = delete;
  ChunkFifo& operator=(const ChunkFifo&) = delete;
  ChunkFifo(ChunkFifo&& o) noexcept { steal(o); }
  ChunkFifo& operator=(ChunkFifo&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~ChunkFifo() { release(); }

  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] T& front() { return *head_->at(head_i_); }
  [[nodiscard]] const T& front() const { return *head_->at(head_i_); }

  void push_back(T value) {
    if (tail_ == nullptr) {
      head_ = tail_ = take_chunk();
      head_i_ = tail_i_ = 0;
    } else if (tail_i_ == kChunk) {
      Chunk* c = take_chunk();
      tail_->next = c;
      tail_ = c;
      tail_i_ = 0;
    }
    ::new (static_cast<void*>(tail_->slot(tail_i_))) T(std::move(value));
    ++tail_i_;
    ++size_;
  }
  void pop_front() {
    head_->at(head_i_)->~T();
    ++head_i_;
    --size_;
    if (size_ == 0) {
      // Empty: the one chunk left starts over (the others were passed on at their ends).
      head_i_ = tail_i_ = 0;
    } else if (head_i_ == kChunk) {
      Chunk* done = head_;
      head_ = head_->next;
      head_i_ = 0;
      keep(done);
    }
  }
  void clear() {
    while (size_ > 0) pop_front();
  }

  // Visits the elements front to back.
  template <typename F>
  void for_each(F&& f) {
    visit(*this, f);
  }
  template <typename F>
  void for_each(F&& f) const {
    visit(*this, f);
  }

 private:
  struct Chunk {
    Chunk* next = nullptr;
    alignas(T) unsigned char bytes[kChunk * sizeof(T)];
    void* slot(std::size_t i) { return bytes + i * sizeof(T); }
    T* at(std::size_t i) { return std::launder(reinterpret_cast<T*>(bytes + i * sizeof(T))); }
    const T* at(std::size_t i) const { return std::launder(reinterpret_cast<const T*>(bytes + i * sizeof(T))); }
  };

  template <typename Self, typename F>
  static void visit(Self& self, F& f) {
    std::size_t left = self.size_;
    std::size_t i = self.head_i_;
    for (auto* c = self.head_; left > 0; c = c->next, i = 0) {
      for (; i < kChunk && left > 0; ++i, --left) f(*c->at(i));
    }
  }

  Chunk* take_chunk() {
    Chunk* c = spare_;
    if (c != nullptr) {
      spare_ = c->next;
    } else {
      c = new Chunk;
    }
    c->next = nullptr;
    return c;
  }
  void keep(Chunk* c) {
    c->next = spare_;
    spare_ = c;
  }
  void release() {
    clear();
    delete head_;  // the one chunk an empty queue keeps (head_ == tail_)
    while (spare_ != nullptr) delete std::exchange(spare_, spare_->next);
    head_ = tail_ = nullptr;
  }
  void steal(ChunkFifo& o) {
    head_ = std::exchange(o.head_, nullptr);
    tail_ = std::exchange(o.tail_, nullptr);
    spare_ = std::exchange(o.spare_, nullptr);
    head_i_ = std::exchange(o.head_i_, 0);
    tail_i_ = std::exchange(o.tail_i_, 0);
    size_ = std::exchange(o.size_, 0);
  }

  Chunk* head_ = nullptr;
  Chunk* tail_ = nullptr;
  Chunk* spare_ = nullptr;  // the free chunks, a list through Chunk::next
  std::size_t head_i_ = 0, tail_i_ = 0, size_ = 0;
};

}  // namespace april::sim
