#pragma once
// The live.* scenario keys read into the live backend's options (plain C++).
#include "adapters/live/countdown_task.hpp"
#include "adapters/live/live_backend.hpp"
#include "base/config.hpp"

namespace april::live {

// mask_offpolicy comes from the policy; device from the command line.
LiveOptions live_options(const base::Config& config, const std::string& device, bool mask_offpolicy);
CountdownParams task_params(const base::Config& config);

}  // namespace april::live
