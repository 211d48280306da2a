#pragma once
// The RL loop's scenario keys (batch size, length cap, the dynamic-sampling
// filter), declared here beside the one place that reads them, and the one
// place a run's loop is built from them, for the simulator and the live
// backend alike.
#include <cstdint>
#include <memory>

#include "base/config.hpp"
#include "rl/rl_loop.hpp"

namespace april::rl {

void declare_loop_knobs(base::ConfigSchema& schema);
LoopOptions loop_options(const base::Config& config);

// The loop of a run: loop_options(config), on `gpus` GPUs (the cluster's,
// for GPU-hours: the simulated cluster's size, a live run's one device).
std::unique_ptr<RlLoop> make_loop(const base::Config& config, Backend& backend, policies::Policy& policy, base::WorkloadSource& workload,
                                  std::int64_t gpus);

}  // namespace april::rl
