// Which policy knobs each policy reads, measured: a sweep runs a grid point
// that differs only in knobs its policy ignores once (PolicyRegistry::ignores),
// so a policy that read a knob it is said to ignore would make the sweep
// merge runs that differ. Each policy is built with every read logged.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "policies/registry.hpp"
#include "scenario/scenario.hpp"

namespace april {
namespace {

TEST(PolicyKnobReads, NoPolicyReadsAKnobItIsSaidToIgnore) {
  const auto registry = policies::builtin_policies();
  const auto schema = scenario::make_schema(registry);
  for (const auto& entry : registry.entries()) {
    // length_aware and streamrl build another policy (their .base): each of them.
    for (const std::string base : {"sync", "april", "async"}) {
      base::Config c(schema);
      if (entry.name == "length_aware" || entry.name == "streamrl") c.set(entry.name + ".base", base, "test");
      std::set<std::string> reads;
      c.log_reads_into(&reads);
      (void)entry.make(c);
      c.log_reads_into(nullptr);
      if (!entry.knobs.empty()) {
        EXPECT_FALSE(reads.empty()) << entry.name;  // the log sees reads
      }
      for (const auto& key : reads) EXPECT_FALSE(registry.ignores(entry.name, key)) << entry.name << " reads " << key;
    }
  }
}

TEST(PolicyKnobReads, OtherPoliciesKnobsAreIgnoredAndScenarioKeysAreNot) {
  const auto registry = policies::builtin_policies();
  EXPECT_TRUE(registry.ignores("sync", "april.alpha"));
  EXPECT_FALSE(registry.ignores("april", "april.alpha"));
  EXPECT_TRUE(registry.ignores("april", "async.eta"));
  EXPECT_FALSE(registry.ignores("length_aware", "april.alpha"));  // its base may be april
  EXPECT_TRUE(registry.ignores("length_aware", "sorted.updates_per_rollout"));
  EXPECT_FALSE(registry.ignores("sync", "cluster.engines"));
  EXPECT_FALSE(registry.ignores("sync", "rollout_batch_size"));
}

}  // namespace
}  // namespace april
