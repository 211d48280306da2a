#pragma once
// A vector of small plain values (copied, never moved one by one) that holds its first N in place and
// moves to the heap past them. A sample's tokens by weight version span one
// or two versions nearly always, and every sample carries such a list through
// the engine, the loop and the train batch: in a std::vector each costs an
// allocation and a pointer to chase (docs/performance.md: the cost per completion stays flat as the
// cluster grows). Written here because Boost's small_vector trips GCC 12's
// -Wstringop-overread (a false positive in its memcpy path), and our
// warnings are errors.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace april::base {

template <typename T, std::size_t N>
class InlineVector {
  static_assert(std::is_nothrow_copy_assignable_v<T> && std::is_default_constructible_v<T>);
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  InlineVector() = default;
  InlineVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <typename It>
  InlineVector(It first, It last) {
    assign(first, last);
  }
  InlineVector(const InlineVector& o) { assign(o.begin(), o.end()); }
  InlineVector(InlineVector&& o) noexcept { take(std::move(o)); }
  InlineVector& operator=(const InlineVector& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.begin(), o.end());
    }
    return *this;
  }
  InlineVector& operator=(InlineVector&& o) noexcept {
    if (this != &o) {
      heap_.reset();
      capacity_ = N;
      take(std::move(o));
    }
    return *this;
  }
  ~InlineVector() = default;

  [[nodiscard]] T* data() { return heap_ ? heap_.get() : local_.data(); }
  [[nodiscard]] const T* data() const { return heap_ ? heap_.get() : local_.data(); }
  [[nodiscard]] iterator begin() { return data(); }
  [[nodiscard]] iterator end() { return data() + size_; }
  [[nodiscard]] const_iterator begin() const { return data(); }
  [[nodiscard]] const_iterator end() const { return data() + size_; }
  [[nodiscard]] size_type size() const { return size_; }
  [[nodiscard]] size_type capacity() const { return capacity_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  T& operator[](size_type i) { return data()[i]; }
  const T& operator[](size_type i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_type n) {
    if (n <= capacity_) return;
    if (n > UINT32_MAX) throw std::length_error("InlineVector holds at most 2^32 - 1 values");
    auto grown = std::make_unique<T[]>(n);
    std::copy(begin(), end(), grown.get());
    heap_ = std::move(grown);
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void push_back(const T& v) {
    if (size_ == capacity_) {
      const T copy = v;  // v may live in this vector
      reserve(2 *
              static_cast<size_type>(capacity_));  // in 64 bits: doubling a 32-bit count past 2^31 must reach reserve's refusal, not wrap
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }

  friend bool operator==(const InlineVector& a, const InlineVector& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator!=(const InlineVector& a, const InlineVector& b) { return !(a == b); }

 private:
  template <typename It>
  void assign(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  // Takes o's values, its heap block whole; o is left empty.
  void take(InlineVector&& o) {
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      capacity_ = o.capacity_;
    } else {
      std::copy(o.local_.begin(), o.local_.begin() + static_cast<std::ptrdiff_t>(o.size_), local_.begin());
    }
    size_ = o.size_;
    o.size_ = 0;
    o.capacity_ = N;
  }

  std::array<T, N> local_{};
  std::unique_ptr<T[]> heap_;
  // 32-bit counts: a sample's handful of versions never nears them, and the
  // 8 bytes saved fit a sample's record, and an engine's request, in one and
  // two cache lines.
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
};

}  // namespace april::base
