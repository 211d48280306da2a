#pragma once
// The cache lines an object spans, packed in one word for prefetch hints: the
// first line's address, whose low 6 bits (always 0 in a 64-byte line's
// address) hold how many lines follow from it. A hint is never read through,
// only handed to the prefetcher, so a stale one costs a wasted fetch and no
// more (docs/performance.md: the cost per completion stays flat as the cluster grows).
#include <cstddef>
#include <cstdint>

namespace april::base {

inline constexpr std::uintptr_t kCacheLineBytes = 64;

// The lines [at, at + bytes) touches, packed; 0 (none) for an empty range.
constexpr std::uintptr_t cache_lines(std::uintptr_t at, std::size_t bytes) {
  if (at == 0 || bytes == 0) return 0;
  const std::uintptr_t first = at & ~(kCacheLineBytes - 1);
  const std::uintptr_t lines = (at + bytes - 1 - first) / kCacheLineBytes + 1;
  return first | (lines < kCacheLineBytes ? lines : kCacheLineBytes - 1);
}

template <typename T>
std::uintptr_t cache_lines_of(const T* object) {
  return cache_lines(reinterpret_cast<std::uintptr_t>(object), sizeof(T));
}

template <typename T>
std::uintptr_t cache_lines_of_span(const T* first, std::size_t count) {
  return cache_lines(reinterpret_cast<std::uintptr_t>(first), count * sizeof(T));
}

// Asks the cache for the packed lines (read, kept in every level).
inline void prefetch_lines(std::uintptr_t packed) {
  const std::uintptr_t first = packed & ~(kCacheLineBytes - 1);
  const std::uintptr_t lines = packed & (kCacheLineBytes - 1);
  for (std::uintptr_t i = 0; i < lines; ++i) __builtin_prefetch(reinterpret_cast<const void*>(first + i * kCacheLineBytes));
}

}  // namespace april::base
