#pragma once
// The live.* scenario keys, declared beside the code that reads them into the
// live backend's options. Plain C++ (no torch): `april` declares these keys
// without loading the live backend.
#include "adapters/live/countdown_task.hpp"
#include "adapters/live/live_options.hpp"
#include "base/config.hpp"

namespace april::live {

void declare_live_knobs(base::ConfigSchema& schema);

// mask_offpolicy comes from the policy; device from the command line.
LiveOptions live_options(const base::Config& config, const std::string& device, bool mask_offpolicy);
CountdownParams task_params(const base::Config& config);

}  // namespace april::live
