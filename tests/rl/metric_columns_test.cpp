// The one metric table drives steps.csv, summary.json and the database: these
// tests fail when a name repeats, when the summary writes a key the table does
// not list (or leaves out one it lists), or when a whole-run value is read
// from the wrong place.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "rl/metric_columns.hpp"

namespace april {
namespace {

rl::StepMetrics step(std::int64_t index, double rollout_s, std::int64_t generated, std::int64_t carried, std::int64_t buffer_tok) {
  rl::StepMetrics m;
  m.step = index;
  m.rollout_time_s = rollout_s;
  m.train_time_s = 1.0;
  m.step_time_s = rollout_s + 1.0;
  m.gpus = 8;
  m.engines = 4;
  m.tokens_generated = generated;
  m.tokens_carried = carried;
  m.batch_response_tok = 100;
  m.tokens_trained = 100;
  m.buffer_tokens = buffer_tok;
  m.buffer_groups = buffer_tok / 10;
  return m;
}

TEST(MetricColumns, NamesAreUniqueAndEveryColumnHasAPlace) {
  std::set<std::string> names;
  for (const auto& c : rl::metric_columns()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name << " is listed twice";
    EXPECT_NE(c.where & rl::kBoth, 0U) << c.name << " appears nowhere";
  }
  // steps.csv's header is the per-step part, in the table's order.
  const std::string csv = rl::steps_csv({});
  std::string header;
  for (const auto& c : rl::step_columns()) {
    if (!header.empty()) header += ',';
    header += c.name;
  }
  EXPECT_EQ(csv, header + "\n");
  EXPECT_EQ(rl::step_columns().front().name, std::string("step"));
}

TEST(MetricColumns, TheSummaryWritesExactlyTheTablesSummaryPart) {
  const auto summary = rl::summarize({step(0, 3.0, 1000, 0, 50), step(1, 5.0, 3000, 1000, 20)});
  const auto j = rl::summary_json(summary);
  std::set<std::string> expected{"event_fingerprint"};
  for (const auto& c : rl::metric_columns()) {
    if ((c.where & rl::kInSummary) == 0) continue;
    // Live-only values are left out of a simulated run's summary; the others are all written.
    if (std::string(c.name) == "reward_mean" || std::string(c.name) == "accuracy") continue;
    expected.insert(c.name);
  }
  std::set<std::string> written;
  for (auto it = j.begin(); it != j.end(); ++it) written.insert(it.key());
  EXPECT_EQ(written, expected);

  // Whole-run values come from the run, not from its totals.
  EXPECT_EQ(j.at("steps").get<std::int64_t>(), 2);
  EXPECT_DOUBLE_EQ(j.at("step_time_s").get<double>(), (4.0 + 6.0) / 2);
  EXPECT_EQ(j.at("tokens_buffered_at_end").get<std::int64_t>(), 20);
  EXPECT_EQ(j.at("buffer_peak_tokens").get<std::int64_t>(), 50);
  // The mean of the steps' ratios (0 and 1000/4000), not the ratio of the sums (1000/5000).
  EXPECT_DOUBLE_EQ(j.at("april_offpolicy_ratio").get<double>(), 0.125);
  EXPECT_EQ(j.at("tokens_generated").get<std::int64_t>(), 4000);
  EXPECT_TRUE(j.at("tokens_generated").is_number_integer());
  // No running cap: slot occupancy has no value, written as null.
  EXPECT_TRUE(j.at("slot_occupancy").is_null());
}

TEST(MetricColumns, LiveValuesAppearWhereTheStepsHaveThem) {
  auto a = step(0, 3.0, 1000, 0, 0);
  auto b = step(1, 3.0, 1000, 0, 0);
  a.reward_mean = 0.25;
  a.accuracy = 0.5;
  b.reward_mean = 0.75;
  b.accuracy = 1.0;
  const auto j = rl::summary_json(rl::summarize({a, b}));
  EXPECT_DOUBLE_EQ(j.at("reward_mean").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j.at("accuracy").get<double>(), 0.75);
  const std::string csv = rl::steps_csv({a});
  EXPECT_NE(csv.find(",0.25,0.5,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace april
