#pragma once
// Whether this build runs under AddressSanitizer or ThreadSanitizer, whose
// allocators replace glibc's: its tunables and mallopt settings do not apply
// (base/huge_page_heap.hpp, base/heap_retention.hpp).
namespace april::base {

inline constexpr bool kSanitizedBuild =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

}  // namespace april::base
