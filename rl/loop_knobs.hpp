#pragma once
// The RL loop's scenario keys (batch size, length cap, the dynamic-sampling
// filter), declared here beside the one place that reads them.
#include "base/config.hpp"
#include "rl/rl_loop.hpp"

namespace april::rl {

void declare_loop_knobs(base::ConfigSchema& schema);
LoopOptions loop_options(const base::Config& config);

}  // namespace april::rl
