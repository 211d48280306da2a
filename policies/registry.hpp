#pragma once
// Named policies (vidur style): each entry declares its own knobs and builds
// itself from a Config. Unknown names are errors that list the known ones.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "policies/policy.hpp"

namespace april::policies {

struct PolicyEntry {
  std::string name;
  std::string summary;
  std::vector<base::Knob> knobs;  // named "<policy>.<param>"
  std::function<std::unique_ptr<Policy>(const base::Config&)> make;
  // Other policies whose knobs this one reads (length_aware wraps sync, april
  // or async). Every other policy's knobs it ignores: a sweep runs a grid
  // point that differs only in them once (tests/policies: what make() reads).
  std::vector<std::string> reads_knobs_of = {};
};

class PolicyRegistry {
 public:
  void add(PolicyEntry entry);
  [[nodiscard]] const PolicyEntry& get(const std::string& name) const;  // throws std::invalid_argument
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const std::vector<PolicyEntry>& entries() const { return entries_; }
  // Whether `policy` ignores scenario key `key`: the key is another policy's
  // knob, of one whose knobs `policy` does not read. Keys of no policy
  // (the cluster's, the workload's) are never ignored.
  [[nodiscard]] bool ignores(const std::string& policy, const std::string& key) const;
  void declare_knobs(base::ConfigSchema& schema) const;

 private:
  std::vector<PolicyEntry> entries_;
};

// Every built-in policy, in the order `april policies` lists them.
PolicyRegistry builtin_policies();

// The built-in policy `name`, built from `c`: the base a wrapping policy
// (length_aware, seer, streamrl) decides for. Its knobs name the bases it
// allows; throws std::invalid_argument on an unknown name.
std::unique_ptr<Policy> make_base_policy(const std::string& name, const base::Config& c);

}  // namespace april::policies
