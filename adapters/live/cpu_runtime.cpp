#include "adapters/live/cpu_runtime.hpp"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace april::live {

void configure_runtime(std::int64_t torch_threads) {
  using SetThreads = void (*)(int);
  if (auto* f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(1);
  torch::set_num_threads(static_cast<int>(std::max<std::int64_t>(1, torch_threads)));
  torch::globalContext().setFlushDenormal(true);
#if defined(__GLIBC__)
  // 32 MiB is glibc's largest mmap threshold on 64-bit; trimming only above 1 GiB free.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace april::live
