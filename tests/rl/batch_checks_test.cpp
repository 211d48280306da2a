// A colocated policy's batch is checked against the groups it may batch: a
// group batched twice, or one not accepted and complete, is the policy's bug,
// refused in words naming the group (rl/colocated_driver.cpp), and the set
// the checks use (rl/sorted_group_ids.hpp) finds every copy of an id at one
// place.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "rl/sorted_group_ids.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using policies::GroupId;

// Asks for `fresh` groups at the step's start; at the first acceptance it
// ends the phase with the batch `batch_of` makes from the accepted group.
class BatchingPolicy final : public policies::Policy {
 public:
  using BatchOf = std::function<std::vector<GroupId>(GroupId accepted)>;
  BatchingPolicy(std::int64_t fresh, BatchOf batch_of) : fresh_(fresh), batch_of_(std::move(batch_of)) {}
  policies::Decisions on_step_start(const policies::RolloutView&) override {
    policies::Decisions d;
    d.fresh_groups = fresh_;
    return d;
  }
  policies::Decisions on_group_accepted(const policies::RolloutView&, GroupId id) override {
    policies::Decisions d;
    d.end_with_batch = batch_of_(id);
    return d;
  }
  policies::Decisions on_group_rejected(const policies::RolloutView&, GroupId) override { return {}; }

 private:
  std::int64_t fresh_;
  BatchOf batch_of_;
};

std::string first_step_error(BatchingPolicy::BatchOf batch_of) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2"});
  f.registry.add({"batching", "a policy whose batch is given", {}, [batch_of](const base::Config&) {
                    return std::make_unique<BatchingPolicy>(2, batch_of);
                  }});
  scenario::Simulation sim(f.config, f.registry, "batching", testing::with_trace({testing::group("g0", {2}), testing::group("g1", {5})}));
  try {
    (void)sim.step();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return {};
}

TEST(BatchChecks, AGroupBatchedTwiceIsRefusedByName) {
  const std::string error = first_step_error([](GroupId id) { return std::vector<GroupId>{id, id}; });
  EXPECT_NE(error.find("policy batched group 0 twice"), std::string::npos) << error;
}

TEST(BatchChecks, AGroupNotAcceptedIsRefusedByName) {
  // g1 is still in flight when g0 is accepted.
  const std::string error = first_step_error([](GroupId id) { return std::vector<GroupId>{id, 1}; });
  EXPECT_NE(error.find("policy batched group 1 which is not accepted and complete"), std::string::npos) << error;
}

TEST(BatchChecks, TheAcceptedGroupAloneIsABatch) {
  EXPECT_EQ(first_step_error([](GroupId id) { return std::vector<GroupId>{id}; }), "");
}

TEST(SortedGroupIds, FindsEveryCopyOfAnIdAtOnePlace) {
  const rl::SortedGroupIds ids(std::vector<GroupId>{9, 3, 7, 3, 12});
  EXPECT_EQ(ids.size(), 5U);
  EXPECT_EQ(ids.find(3), 0U);
  EXPECT_EQ(ids.find(7), 2U);
  EXPECT_EQ(ids.find(12), 4U);
  EXPECT_EQ(ids.find(4), rl::SortedGroupIds::npos);
  EXPECT_EQ(ids.find(13), rl::SortedGroupIds::npos);
  EXPECT_TRUE(ids.contains(9));
  EXPECT_FALSE(ids.contains(-1));
}

}  // namespace
}  // namespace april
