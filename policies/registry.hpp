#pragma once
// Named policies (vidur style): each entry declares its own knobs and builds
// itself from a Config. Unknown names are errors that list the known ones.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policies/policy.hpp"
#include "sim/config.hpp"

namespace april::policies {

struct PolicyEntry {
  std::string name;
  std::string summary;
  std::vector<sim::Knob> knobs;  // named "<policy>.<param>"
  std::function<std::unique_ptr<Policy>(const sim::Config&)> make;
};

class PolicyRegistry {
 public:
  void add(PolicyEntry entry);
  [[nodiscard]] const PolicyEntry& get(const std::string& name) const;  // throws std::invalid_argument
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const std::vector<PolicyEntry>& entries() const { return entries_; }
  void declare_knobs(sim::ConfigSchema& schema) const;

 private:
  std::vector<PolicyEntry> entries_;
};

// sync, april and sorted.
PolicyRegistry builtin_policies();

}  // namespace april::policies
