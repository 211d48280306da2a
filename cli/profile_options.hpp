#pragma once
// The live engine's profile options from a scenario's live.* keys: what
// `april profile` measures, and what `april validate` profiles between its steps.
#include <cstdint>
#include <string>

#include "adapters/live/profiler.hpp"
#include "base/config.hpp"

namespace april::cli {

live::ProfileOptions profile_options(const base::Config& c, const std::string& device, std::int64_t repeats);

}  // namespace april::cli
