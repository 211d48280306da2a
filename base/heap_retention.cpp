#include "base/heap_retention.hpp"

#include <malloc.h>

namespace april::base {

void retain_freed_heap() {
  // Both fixed: setting either one turns glibc's adaptive thresholds off.
  // 32 MiB is the largest mmap threshold glibc takes on 64-bit
  // (DEFAULT_MMAP_THRESHOLD_MAX, malloc/malloc.c); a refusal leaves the default.
  constexpr int kTrimThresholdBytes = 1 << 30;
  constexpr int kMmapThresholdBytes = 32 << 20;
  (void)mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
  (void)mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
}

}  // namespace april::base
