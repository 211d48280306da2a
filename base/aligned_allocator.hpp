#pragma once
// A standard allocator whose blocks start on an `Align`-byte boundary: heaps
// whose sibling groups must share whole cache lines (sim/finish_heap.hpp,
// sim/event_queue.hpp) keep their entries in vectors of it.
#include <cstddef>
#include <new>

namespace april::base {

template <typename T, std::size_t Align>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{Align};
  template <typename U>
  struct rebind {
    using other = AlignedAllocator<U, Align>;
  };
  AlignedAllocator() = default;
  template <typename U>
  explicit AlignedAllocator(const AlignedAllocator<U, Align>& /*other*/) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const AlignedAllocator<U, Align>& /*other*/) const {
    return true;
  }
  template <typename U>
  bool operator!=(const AlignedAllocator<U, Align>& /*other*/) const {
    return false;
  }
};

}  // namespace april::base
