#pragma once
// What the live trainer benches share: the process's minor page faults, and
// the synthetic GRPO batch they time a step on.
#include <sys/resource.h>

#include <cstdint>
#include <vector>

#include "adapters/live/detail/grpo.hpp"
#include "tasks/countdown_task.hpp"

namespace april::bench {

inline long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Lengths spread up to `response_tok` (which sets the padded length), groups of 8, half rewarded.
inline std::vector<live::TrainSampleData> filler_batch(std::int64_t samples, std::int64_t response_tok) {
  using live::CountdownTask;
  std::vector<live::TrainSampleData> batch;
  for (std::int64_t i = 0; i < samples; ++i) {
    const auto len = static_cast<std::size_t>(1 + (response_tok - 1) * (i % 8 + 1) / 8);
    batch.push_back(live::filler_sample({CountdownTask::kBos, CountdownTask::kOne, CountdownTask::kSep}, CountdownTask::kOne, len,
                                        static_cast<double>(i % 2), i / 8));
  }
  return batch;
}

}  // namespace april::bench
