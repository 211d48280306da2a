#pragma once
// The live.* scenario keys, declared beside the code that reads them into the
// live backend's options. Plain C++ (no torch): `april` declares these keys
// without loading the live backend.
#include "adapters/live/countdown_task.hpp"
#include "adapters/live/live_options.hpp"
#include "base/config.hpp"

namespace april::live {

void declare_live_knobs(base::ConfigSchema& schema);

// mask_staleness_above comes from the policy (mask_tokens_staler_than); device
// from the command line.
LiveOptions live_options(const base::Config& config, const std::string& device, std::int64_t mask_staleness_above);
CountdownParams task_params(const base::Config& config);
ServingOptions serving_options(const base::Config& config);

}  // namespace april::live
