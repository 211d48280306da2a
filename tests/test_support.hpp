#pragma once
// Helpers shared by the tests: a scenario Config built like the CLI does.
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/config.hpp"
#include "policies/policy.hpp"
#include "policies/registry.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation.hpp"

namespace april::rl {
// gtest prints a segment as (version, tokens) instead of its bytes.
inline void PrintTo(const Segment& s, std::ostream* os) { *os << "(v" << s.version << ", " << s.tokens << ")"; }
}  // namespace april::rl

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

// The hand trace the handcheck tests work out on paper: eight groups of two
// samples, lengths chosen so that every step can be followed by hand.
inline std::vector<base::GroupSpec> hand_trace() {
  return {group("p0", {3, 5}), group("p1", {10, 2}), group("p2", {4, 4}), group("p3", {20, 1}),
          group("p4", {6, 6}), group("p5", {1, 2}),  group("p6", {8, 3}), group("p7", {2, 2})};
}

// Run options that replay `trace` (named "hand").
inline scenario::RunOptions with_trace(std::vector<base::GroupSpec> trace) {
  scenario::RunOptions o;
  o.trace = std::move(trace);
  o.trace_name = "hand";
  return o;
}

// Run options that replay 16 groups g0..g15 of one 5-token sample each: a
// group alone on a 1 ms-per-iteration engine takes 5 ms (the hand-worked
// overlapped schedules).
inline scenario::RunOptions five_token_groups() {
  std::vector<base::GroupSpec> trace;
  for (int i = 0; i < 16; ++i) trace.push_back(group(std::string("g").append(std::to_string(i)), {5}));
  return with_trace(std::move(trace));
}

// Each step's rollout time in ms: `policy` on the handcheck scenario with
// `sets`, replaying `trace`, for `steps` steps.
inline std::vector<double> rollout_ms(const std::string& policy, const std::vector<std::string>& sets, std::vector<base::GroupSpec> trace,
                                      int steps) {
  Fixture f("handcheck", sets);
  scenario::Simulation sim(f.config, f.registry, policy, with_trace(std::move(trace)));
  std::vector<double> out;
  for (int s = 0; s < steps; ++s) out.push_back(sim.step().rollout_time_s * 1e3);
  return out;
}

// A policy whose plan is given: it asks for `fresh_groups` at each step's
// start and plans every instant's submissions with `plan`, to check how the
// loop takes a plan (a policy's mistakes are refused in words).
class PlanningPolicy final : public policies::Policy {
 public:
  using Plan = std::function<policies::SubmissionPlan(const std::vector<policies::Submission>&)>;
  PlanningPolicy(std::int64_t fresh_groups, Plan plan) : fresh_groups_(fresh_groups), plan_(std::move(plan)) {}
  policies::Decisions on_step_start(const policies::RolloutView&) override {
    policies::Decisions d;
    d.fresh_groups = fresh_groups_;
    return d;
  }
  policies::Decisions on_group_accepted(const policies::RolloutView&, policies::GroupId) override { return {}; }
  policies::Decisions on_group_rejected(const policies::RolloutView&, policies::GroupId) override { return {}; }
  policies::SubmissionPlan plan_submissions(const policies::RolloutView&, const std::vector<policies::Submission>& subs) override {
    return plan_(subs);
  }

 private:
  std::int64_t fresh_groups_;
  Plan plan_;
};

// The words of the std::logic_error the first step of a PlanningPolicy
// throws on `f`'s scenario replaying `trace`; empty when it throws none.
inline std::string first_step_error(Fixture& f, std::int64_t fresh_groups, PlanningPolicy::Plan plan, std::vector<base::GroupSpec> trace) {
  const std::string name = "planning_" + std::to_string(f.registry.names().size());
  f.registry.add({name, "a policy whose plan is given", {}, [fresh_groups, plan](const base::Config&) {
                    return std::make_unique<PlanningPolicy>(fresh_groups, plan);
                  }});
  scenario::Simulation sim(f.config, f.registry, name, with_trace(std::move(trace)));
  try {
    (void)sim.step();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return {};
}

}  // namespace april::testing
