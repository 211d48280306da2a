#pragma once
// The live.* scenario keys read into the live backend's options (plain C++).
#include "adapters/live/countdown_task.hpp"
#include "adapters/live/live_backend.hpp"
#include "sim/config.hpp"

namespace april::live {

// mask_offpolicy comes from the policy; device from the command line.
LiveOptions live_options(const sim::Config& config, const std::string& device, bool mask_offpolicy);
CountdownParams task_params(const sim::Config& config);

}  // namespace april::live
