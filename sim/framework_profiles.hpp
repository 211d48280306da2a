#pragma once
// Framework profiles: what an RL framework sets around the cost models (its
// trainer backend, its data-parallel balance, its engines' memory fraction,
// its fixed cost per step), named as a user names the framework
// (`framework: verl-fsdp2`). A scenario key set explicitly wins over the
// profile; the profile wins over the key's default. What a profile fits is
// fitted on at most one published row, and that row counts as fitted in every
// check (`april reproduce`, docs/published-runs.md).
#include <string>
#include <vector>

#include "base/config.hpp"

namespace april::sim {

struct FrameworkProfile {
  std::string name;
  std::string about;  // one line, for `april keys`
  base::ConfigSchema::Profile settings;
  // The published row its fitted value came from: examples/published/<file>, row.
  std::string fitted_file, fitted_row;
};

const std::vector<FrameworkProfile>& framework_profiles();

// Declares the `framework` key and the profiles; after every other key.
void declare_framework_profiles(base::ConfigSchema& schema);

namespace keys {
inline constexpr base::StringKey kFramework{"framework"};
}  // namespace keys

}  // namespace april::sim
