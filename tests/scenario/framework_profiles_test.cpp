// Framework profiles: defaults beneath what a scenario sets, over the keys'
// own defaults; each fitted value is its published file's fit.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/config.hpp"
#include "policies/registry.hpp"
#include "scenario/scenario.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/framework_profiles.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april {
namespace {

TEST(FrameworkProfiles, DefaultsBeneathWhatTheScenarioSets) {
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  base::Config c(schema);
  EXPECT_EQ(c.get(sim::keys::kTrainFramework), "megatron");
  EXPECT_EQ(c.get(sim::keys::kTrainBalance), "even");
  c.set_from_text("framework", "verl-fsdp2", "test");
  EXPECT_EQ(c.get(sim::keys::kTrainFramework), "fsdp");
  EXPECT_EQ(c.get(sim::keys::kTrainBalance), "verl");
  EXPECT_DOUBLE_EQ(c.get(sim::keys::kEngineGpuMemoryFraction), 0.5);
  EXPECT_GT(c.get(sim::keys::kTrainFixedS), 0.0);
  EXPECT_FALSE(c.is_set("train.framework"));  // still the profile's, not the run's
  // What the scenario sets wins, before or after the framework.
  c.set_from_text("engine.gpu_memory_fraction", "0.8", "test");
  EXPECT_DOUBLE_EQ(c.get(sim::keys::kEngineGpuMemoryFraction), 0.8);
  c.set_from_text("framework", "slime", "test");
  EXPECT_EQ(c.get(sim::keys::kTrainFramework), "megatron");
  EXPECT_DOUBLE_EQ(c.get(sim::keys::kTrainFixedS), 0.0);  // slime's: nothing fitted
  EXPECT_DOUBLE_EQ(c.get(sim::keys::kEngineGpuMemoryFraction), 0.8);
  EXPECT_EQ(c.resolved()["train.full_recompute"], true);
  c.set_from_text("framework", "nemo-rl-megatron", "test");
  EXPECT_EQ(c.get(sim::keys::kTrainFramework), "megatron");
  EXPECT_EQ(c.resolved()["train.full_recompute"], false);
  EXPECT_EQ(c.resolved()["train.ref_logprob"], true);
  EXPECT_DOUBLE_EQ(c.get(sim::keys::kTrainFixedS), 0.0);              // nothing fitted
  EXPECT_DOUBLE_EQ(c.get(sim::keys::kEngineGpuMemoryFraction), 0.8);  // the scenario's, still
  EXPECT_THROW(c.set_from_text("framework", "verl-fsdp", "test"), base::ConfigError);
}

TEST(FrameworkProfiles, BadProfilesAreAProgrammingError) {
  base::ConfigSchema s;
  s.add({"framework", base::KnobType::String, std::string(""), "", "", {}});
  s.add({"x", base::KnobType::Double, 1.0, "", "", base::in_range(0, 2)});
  EXPECT_THROW(s.add_profiles("framework", {{"p", {{"x", 3.0}}}}), std::logic_error);               // outside its range
  EXPECT_THROW(s.add_profiles("framework", {{"p", {{"x", std::string("a")}}}}), std::logic_error);  // of another type
  EXPECT_THROW(s.add_profiles("framework", {{"p", {{"y", 1.0}}}}), std::logic_error);               // no such knob
  EXPECT_THROW(s.add_profiles("x", {}), std::logic_error);                                          // no string selector
}

// A profile's fixed cost per step is the value its file's fit finds on the
// row it names (`april reproduce --fit` re-derives it there).
TEST(FrameworkProfiles, FittedValuesAreTheirFilesFits) {
  int fitted = 0;
  for (const auto& p : sim::framework_profiles()) {
    if (p.fitted_file.empty()) continue;
    std::ifstream in(std::string(APRIL_PUBLISHED_DIR) + "/" + p.fitted_file);
    ASSERT_TRUE(in) << p.fitted_file;
    const auto doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc["scenario"]["framework"], p.name) << p.fitted_file;
    EXPECT_EQ(doc["fit"]["row"], p.fitted_row) << p.fitted_file;
    EXPECT_DOUBLE_EQ(std::get<double>(p.settings.at("train.fixed_s")), doc["fit"]["fitted"]["train.fixed_s"].get<double>()) << p.name;
    ++fitted;
  }
  EXPECT_EQ(fitted, 2);
}

}  // namespace
}  // namespace april
