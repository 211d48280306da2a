// Generators that share a process's stream of groups hand out exactly the
// groups a generator of their own would draw, before and past the stream's
// kept groups, from any thread.
#include "sim/shared_groups.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "sim/workload.hpp"

namespace april::sim {
namespace {

std::vector<base::GroupSpec> draw(WorkloadSource& g, std::size_t n) {
  std::vector<base::GroupSpec> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(g.next_group(static_cast<std::int64_t>(i / 7)));
  return out;
}

void expect_same(const std::vector<base::GroupSpec>& a, const std::vector<base::GroupSpec>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt_id, b[i].prompt_id) << "group " << i;
    EXPECT_EQ(a[i].prompt_tok, b[i].prompt_tok) << "group " << i;
    EXPECT_EQ(a[i].response_tok, b[i].response_tok) << "group " << i;
    EXPECT_EQ(a[i].correct, b[i].correct) << "group " << i;
  }
}

TEST(SharedGroups, HandsOutTheGroupsAGeneratorOfItsOwnDraws) {
  LongTailParams p;
  p.samples_per_group = 5;
  // 300 kept groups, and generators that draw 1,000: past the stream's end they go on alone.
  auto stream = std::make_shared<SharedGroups>(p, 11, 300);
  LongTailGenerator own(p, 11);
  const auto expected = draw(own, 1000);
  std::vector<std::vector<base::GroupSpec>> got(4);
  std::vector<std::thread> threads;
  for (auto& g : got) {
    threads.emplace_back([&] {
      LongTailGenerator shared(p, 11, stream);
      g = draw(shared, 1000);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& g : got) expect_same(g, expected);
}

TEST(SharedGroups, ADatasetOfPromptsAndTheProcessStreamMatchToo) {
  LongTailParams p;
  p.samples_per_group = 3;
  p.dataset_prompts = 40;
  LongTailGenerator own(p, 5);
  const auto expected = draw(own, 500);
  auto first = shared_long_tail_generator(p, 5);
  auto second = shared_long_tail_generator(p, 5);
  expect_same(draw(*first, 500), expected);
  expect_same(draw(*second, 500), expected);
}

TEST(SharedGroups, AGeneratorThatDriftsDrawsByItsSteps) {
  LongTailParams p;
  p.drift_dip = 0.5;
  p.drift_dip_step = 3;
  LongTailGenerator own(p, 2);
  const auto expected = draw(own, 60);
  auto shared = shared_long_tail_generator(p, 2);
  expect_same(draw(*shared, 60), expected);
  // Another seed or other keys are another workload.
  LongTailGenerator other(p, 3);
  EXPECT_NE(draw(other, 1)[0].response_tok, expected[0].response_tok);
}

}  // namespace
}  // namespace april::sim
