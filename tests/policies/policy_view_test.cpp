// A policy cannot read a sample's target length: it decides from what a real
// system observes. The view it gets (policies/policy.hpp)
// has no length to come, and policies cannot link the simulator (the layout
// test); this proves it by behaviour: everything a policy is shown is the
// same, callback by callback, when a sample that has not finished yet is
// given a different target length.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "policies/april_policy.hpp"
#include "test_support.hpp"

namespace april {
namespace {

using policies::Decisions;
using policies::GroupId;
using policies::RolloutView;

// Everything the view offers, as text. A field added to GroupInfo or the view
// belongs here too, so that this test covers it.
std::string shown(const RolloutView& v, const std::string& event, std::set<GroupId>& known) {
  std::string s = fmt::format("{} step {} in_flight {} pending {} trained {} buffer", event, v.step(), v.in_flight_groups(),
                              v.pending_complete_groups(), v.trained_steps());
  for (GroupId id : v.buffer()) {
    s += fmt::format(" {}", id);
    known.insert(id);
  }
  s += " accepted";
  for (GroupId id : v.accepted_groups()) {
    s += fmt::format(" {}", id);
    known.insert(id);
  }
  for (GroupId id : known) {
    try {
      const auto g = v.group(id);
      s += fmt::format(" | g{} {} {}/{} tok {} off {} oldest {} samples", g.id, v.prompt_id(id), g.finished_samples, g.samples,
                       g.generated_tok, g.offpolicy_tok, g.oldest_version);
      for (const auto& st : v.group_samples(id)) s += fmt::format(" {}{}", st.generated_tok, st.finished ? "." : "");
    } catch (const std::logic_error&) {
      s += fmt::format(" | g{} trained", id);  // no longer held: trained
    }
  }
  return s;
}

// APRIL itself decides; this records what it was shown at each callback.
class RecordingPolicy final : public policies::Policy {
 public:
  explicit RecordingPolicy(std::vector<std::string>& log) : log_(log), inner_(policies::AprilParams{4, -1, false}) {}
  Decisions on_step_start(const RolloutView& v) override {
    log_.push_back(shown(v, "start", known_));
    return inner_.on_step_start(v);
  }
  Decisions on_group_accepted(const RolloutView& v, GroupId g) override {
    known_.insert(g);
    log_.push_back(shown(v, fmt::format("accepted {}", g), known_));
    return inner_.on_group_accepted(v, g);
  }
  Decisions on_group_rejected(const RolloutView& v, GroupId g) override {
    log_.push_back(shown(v, fmt::format("rejected {}", g), known_));
    return inner_.on_group_rejected(v, g);
  }

 private:
  std::vector<std::string>& log_;
  policies::AprilPolicy inner_;
  std::set<GroupId> known_;
};

std::vector<std::string> observe(std::int32_t p3_long_sample, int steps) {
  testing::Fixture f("handcheck", {"rollout_batch_size=2"});
  std::vector<std::string> log;
  policies::PolicyRegistry registry;
  registry.add(
      {"recording", "APRIL, recording its view", {}, [&log](const base::Config&) { return std::make_unique<RecordingPolicy>(log); }});
  auto trace = testing::hand_trace();
  trace[3].response_tok[0] = p3_long_sample;
  const auto o = testing::with_trace(std::move(trace));
  scenario::Simulation sim(f.config, registry, "recording", o);
  for (int s = 0; s < steps; ++s) (void)sim.step();
  return log;
}

TEST(PolicyView, ALengthToComeIsNeverShown) {
  // p3's long sample (group g3) is resumed every step and, at 20 tokens,
  // finishes in step 4 (Handcheck.AprilBatchesBufferAndResumeOrderFollowTheHandTrace).
  // At 90 tokens it is still running then. Until it finishes, the policy must
  // see exactly the same things: tokens so far, never the target.
  const auto at20 = observe(20, 5);
  const auto at90 = observe(90, 5);
  std::size_t same = 0;
  while (same < at20.size() && same < at90.size() && at20[same] == at90[same]) ++same;
  ASSERT_LT(same, at20.size()) << "the two runs never differed: the test would prove nothing";
  // The first difference is g3's completion in step 4, and nothing before it.
  EXPECT_NE(at20[same].find("step 4"), std::string::npos) << at20[same];
  EXPECT_NE(at20[same].find("accepted 3"), std::string::npos) << at20[same];
  // Every callback of steps 0 to 3 was identical (the last one shared is in step 4).
  ASSERT_GE(same, 12U);
  EXPECT_NE(at20[same - 1].find("step 4"), std::string::npos) << at20[same - 1];
}

}  // namespace
}  // namespace april
