#pragma once
// Named policies (vidur style): each entry declares its own knobs and builds
// itself from a Config. Unknown names are errors that list the known ones.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policies/policy.hpp"
#include "base/config.hpp"

namespace april::policies {

struct PolicyEntry {
  std::string name;
  std::string summary;
  std::vector<base::Knob> knobs;  // named "<policy>.<param>"
  std::function<std::unique_ptr<Policy>(const base::Config&)> make;
};

class PolicyRegistry {
 public:
  void add(PolicyEntry entry);
  [[nodiscard]] const PolicyEntry& get(const std::string& name) const;  // throws std::invalid_argument
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const std::vector<PolicyEntry>& entries() const { return entries_; }
  void declare_knobs(base::ConfigSchema& schema) const;

 private:
  std::vector<PolicyEntry> entries_;
};

// sync, april and sorted.
PolicyRegistry builtin_policies();

}  // namespace april::policies
