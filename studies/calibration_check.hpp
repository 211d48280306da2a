#pragma once
// A calibration `april simulate` would refuse is refused by `april calibrate`
// itself: each fitted key is checked against the scenario's own validators,
// and an error names the key, its bound and the profile points it follows,
// so that the user can drop or re-run those probes.
#include <string>

#include "base/config.hpp"
#include "studies/calibration.hpp"

namespace april::studies {

// The profile points a fitted key is fitted on, slowest first (three at
// most), with the median of their kind: "iterations 5 (1e+07 s), ...".
std::string probes_behind(const Profile& profile, const std::string& key);

// Throws std::invalid_argument listing every key of calibration_scenario_json(c)
// that `schema`'s validators refuse, each with probes_behind.
void check_simulate_accepts(const Calibration& c, const Profile& profile, const base::ConfigSchema& schema,
                            const std::string& profile_path);

}  // namespace april::studies
