#pragma once
// Helpers shared by the tests: a scenario Config built like the CLI does.
#include <string>
#include <utility>
#include <vector>

#include "adapters/scenario.hpp"
#include "adapters/simulation.hpp"
#include "policies/registry.hpp"
#include "sim/config.hpp"

namespace april::testing {

struct Fixture {
  policies::PolicyRegistry registry = policies::builtin_policies();
  sim::ConfigSchema schema = adapters::make_schema(registry);
  sim::Config config{schema};

  explicit Fixture(const std::string& scenario = "default", const std::vector<std::string>& sets = {}) {
    adapters::apply_scenario(config, scenario);
    for (const auto& s : sets) config.apply_assignment(s);
  }
};

inline sim::GroupSpec group(const std::string& id, std::vector<std::int32_t> lengths, std::int32_t prompt_tok = 8) {
  sim::GroupSpec g;
  g.prompt_id = id;
  g.prompt_tok = prompt_tok;
  g.response_tok = std::move(lengths);
  return g;
}

}  // namespace april::testing
