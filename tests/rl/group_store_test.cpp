// The loop's groups by id (rl::GroupStore): a window of ids that grows and
// shrinks at its ends, references that stay valid, and a checkpoint that asks
// for a group twice or for ids too far apart refused by its JSON path.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/config.hpp"
#include "rl/group_store.hpp"
#include "rl/rollout_state.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using rl::GroupStore;
using rl::RolloutGroup;

RolloutGroup made(policies::GroupId id, std::string prompt = "") {
  RolloutGroup g;
  g.id = id;
  g.prompt_id = std::move(prompt);
  return g;
}

std::vector<policies::GroupId> ids(const GroupStore<RolloutGroup>& s) {
  std::vector<policies::GroupId> out;
  s.for_each([&](const RolloutGroup& g) { out.push_back(g.id); });
  return out;
}

TEST(GroupStore, HoldsGroupsByIdAndForgetsErasedOnes) {
  GroupStore<RolloutGroup> s;
  for (policies::GroupId id : {5, 6, 7, 9}) s.emplace(made(id, "p" + std::to_string(id)));
  EXPECT_EQ(s.size(), 4U);
  EXPECT_EQ(s.find(8), nullptr);
  EXPECT_EQ(s.find(4), nullptr);
  EXPECT_EQ(s.find(10), nullptr);
  ASSERT_NE(s.find(9), nullptr);
  EXPECT_EQ(s.find(9)->prompt_id, "p9");
  RolloutGroup& seven = *s.find(7);
  s.erase(5);  // the window's first: it shrinks
  s.erase(6);
  s.emplace(made(2, "p2"));  // below the window: it grows at the front
  s.emplace(made(12, "p12"));
  EXPECT_EQ(&seven, s.find(7)) << "a reference moved while the window changed";
  EXPECT_EQ(ids(s), (std::vector<policies::GroupId>{2, 7, 9, 12}));
  s.erase(7);
  s.erase(7);  // twice: nothing held, nothing done
  EXPECT_EQ(s.find(7), nullptr);
  EXPECT_EQ(s.size(), 3U);
  EXPECT_THROW(s.emplace(made(9)), std::logic_error);
  s.erase(2);
  s.erase(9);
  s.erase(12);
  EXPECT_EQ(s.size(), 0U);
  constexpr policies::GroupId far = GroupStore<RolloutGroup>::kChunk * 4000;  // a chunk's first id
  s.emplace(made(far + 3));                                                   // an empty store starts its window anywhere
  EXPECT_TRUE(s.fits(far + GroupStore<RolloutGroup>::kMaxSpan - 1));
  EXPECT_FALSE(s.fits(far + GroupStore<RolloutGroup>::kMaxSpan));
  EXPECT_THROW(s.emplace(made(far + GroupStore<RolloutGroup>::kMaxSpan)), std::length_error);
  s.emplace(made(far + GroupStore<RolloutGroup>::kChunk + 1));  // the next chunk
  s.erase(far + 3);                                             // the first chunk empties and goes
  EXPECT_EQ(ids(s), (std::vector<policies::GroupId>{far + GroupStore<RolloutGroup>::kChunk + 1}));
}

// One APRIL step on the handcheck scenario leaves group 1 in the buffer
// (contract_test's Ties case); its checkpoint is then corrupted.
nlohmann::json state_with_a_buffered_group(scenario::Simulation& sim) {
  (void)sim.step();
  nlohmann::json state = sim.loop().save_state();
  EXPECT_EQ(state.at("buffer").size(), 1U);
  return state;
}

// Loading `state` is refused with a message naming each of `words`.
void expect_refused(scenario::Simulation& sim, const nlohmann::json& state, const std::vector<std::string>& words) {
  try {
    sim.loop().load_state(state);
    ADD_FAILURE() << "loaded; expected a refusal naming " << words.front();
  } catch (const base::ConfigError& e) {
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(GroupStore, ACheckpointHoldingAGroupTwiceOrFarApartIsRefusedByPath) {
  testing::Fixture f("handcheck", {"cluster.gpus=2", "cluster.engines=2", "rollout_batch_size=1", "april.alpha=2"});
  scenario::Simulation sim(f.config, f.registry, "april", testing::with_trace({testing::group("g0", {2, 5}), testing::group("g1", {5})}));
  const nlohmann::json state = state_with_a_buffered_group(sim);
  sim.loop().load_state(state);  // as written: loads

  nlohmann::json twice = state;
  twice["buffer"].push_back(twice["buffer"][0]);
  expect_refused(sim, twice, {"/buffer/1/id", "twice"});

  nlohmann::json far = state;
  far["buffer"].push_back(far["buffer"][0]);
  far["buffer"][1]["id"] = far["buffer"][0]["id"].get<std::int64_t>() + GroupStore<RolloutGroup>::kMaxSpan;
  expect_refused(sim, far, {"/buffer/1/id"});
}

// The step metrics take the held tokens from the accounts, so a checkpoint
// whose accounts do not add up to what its groups hold is refused.
TEST(GroupStore, ACheckpointWhoseTokenAccountsDoNotAddUpIsRefusedByField) {
  testing::Fixture f("handcheck", {"cluster.gpus=2", "cluster.engines=2", "rollout_batch_size=1", "april.alpha=2"});
  scenario::Simulation sim(f.config, f.registry, "april", testing::with_trace({testing::group("g0", {2, 5}), testing::group("g1", {5})}));
  const nlohmann::json state = state_with_a_buffered_group(sim);
  EXPECT_GT(sim.loop().buffered_tok(), 0);
  nlohmann::json off = state;
  off["total_generated_tok"] = state["total_generated_tok"].get<std::int64_t>() + 1;
  expect_refused(sim, off, {"total_generated_tok", "held in its groups"});
  sim.loop().load_state(state);  // as written: loads
}

}  // namespace
}  // namespace april
