#pragma once
// Helpers shared by the tests: a scenario Config built like the CLI does.
#include <string>
#include <utility>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/simulation.hpp"
#include "policies/registry.hpp"
#include "base/config.hpp"

namespace april::testing {

struct Fixture {
  policies::PolicyRegistry registry = policies::builtin_policies();
  base::ConfigSchema schema = scenario::make_schema(registry);
  base::Config config{schema};

  explicit Fixture(const std::string& scenario = "default", const std::vector<std::string>& sets = {}) {
    scenario::apply_scenario(config, scenario);
    for (const auto& s : sets) config.apply_assignment(s);
  }
};

inline base::GroupSpec group(const std::string& id, std::vector<std::int32_t> lengths, std::int32_t prompt_tok = 8) {
  base::GroupSpec g;
  g.prompt_id = id;
  g.prompt_tok = prompt_tok;
  g.response_tok = std::move(lengths);
  return g;
}

}  // namespace april::testing
