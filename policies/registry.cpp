#include "policies/registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <stdexcept>

#include "policies/april_adaptive_policy.hpp"
#include "policies/april_policy.hpp"
#include "policies/async_policy.hpp"
#include "policies/elastic_policy.hpp"
#include "policies/laminar_policy.hpp"
#include "policies/length_aware_policy.hpp"
#include "policies/one_step_off_policy.hpp"
#include "policies/seer_policy.hpp"
#include "policies/sorted_policy.hpp"
#include "policies/streamrl_policy.hpp"
#include "policies/sync_policy.hpp"
#include "policies/tail_batching_policy.hpp"

namespace april::policies {

void PolicyRegistry::add(PolicyEntry entry) {
  for (const auto& e : entries_) {
    if (e.name == entry.name) throw std::logic_error("policy registered twice: " + entry.name);
  }
  entries_.push_back(std::move(entry));
}

bool PolicyRegistry::ignores(const std::string& policy, const std::string& key) const {
  const auto& reader = get(policy);
  for (const auto& e : entries_) {
    const bool owns = std::any_of(e.knobs.begin(), e.knobs.end(), [&](const base::Knob& k) { return k.name == key; });
    if (!owns) continue;
    if (e.name == policy) return false;
    return std::find(reader.reads_knobs_of.begin(), reader.reads_knobs_of.end(), e.name) == reader.reads_knobs_of.end();
  }
  return false;
}

const PolicyEntry& PolicyRegistry::get(const std::string& name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return e;
  }
  throw std::invalid_argument(fmt::format("unknown policy '{}'; known policies: {}", name, fmt::join(names(), ", ")));
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

void PolicyRegistry::declare_knobs(base::ConfigSchema& schema) const {
  for (const auto& e : entries_) {
    for (const auto& k : e.knobs) schema.add(k);
  }
}

PolicyRegistry builtin_policies() {
  PolicyRegistry r;
  r.add(sync_policy_entry());
  r.add(april_policy_entry());
  r.add(april_adaptive_policy_entry());
  r.add(sorted_policy_entry());
  r.add(tail_batching_policy_entry());
  r.add(one_step_off_policy_entry());
  r.add(async_policy_entry());
  r.add(length_aware_policy_entry());
  r.add(seer_policy_entry());
  r.add(streamrl_policy_entry());
  r.add(laminar_policy_entry());
  r.add(elastic_policy_entry());
  return r;
}

std::unique_ptr<Policy> make_base_policy(const std::string& name, const base::Config& c) { return builtin_policies().get(name).make(c); }

}  // namespace april::policies
