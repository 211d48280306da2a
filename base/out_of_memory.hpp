#pragma once
// What a run that ran out of memory says, in place of std::bad_alloc's
// "std::bad_alloc": the cause a user can act on.
namespace april::base {

inline constexpr const char* kOutOfMemory =
    "out of memory: the run needs more memory than this machine (or the limit it runs under) gives; "
    "fewer steps, repeats, groups or GPUs need less";

}  // namespace april::base
