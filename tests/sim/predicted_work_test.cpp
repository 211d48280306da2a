// PredictedWork (sim/predicted_work.hpp) against the scan it replaces: random
// requests join and leave while the clock grows, and at every step the kept
// total equals the sum of max(1, p - g - max(0, c - T0)) over those present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/predicted_work.hpp"

namespace april::sim {
namespace {

struct Present {
  std::int64_t t0, k;
};

std::int64_t scan(const std::vector<Present>& present, std::int64_t clock) {
  std::int64_t sum = 0;
  for (const auto& r : present) {
    const std::int64_t left = r.k - std::max(clock, r.t0);  // p - g - max(0, c - T0)
    sum += std::max<std::int64_t>(1, left);
  }
  return sum;
}

TEST(PredictedWork, EqualsTheScanWhileRequestsComeAndGoAndTheClockGrows) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    PredictedWork work;
    std::vector<Present> present;
    std::int64_t clock = 0;
    for (int step = 0; step < 2000; ++step) {
      const auto roll = rng() % 10;
      if (roll < 4) {
        // Admitted now: feeds 0-5 tokens, predicted 1-60 more (some already past: 0 or less).
        const std::int64_t t0 = clock + static_cast<std::int64_t>(rng() % 6);
        const std::int64_t left = static_cast<std::int64_t>(rng() % 62) - 1;
        present.push_back({t0, t0 + left});
        work.add(present.back().t0, present.back().k);
      } else if (roll < 7 && !present.empty()) {
        const auto at = static_cast<std::size_t>(rng() % present.size());
        work.remove(present[at].t0, present[at].k);
        present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        clock += static_cast<std::int64_t>(rng() % 4);
      }
      if (rng() % 3 == 0) {
        ASSERT_EQ(work.total_at(clock), scan(present, clock)) << "trial " << trial << " step " << step;
      }
    }
  }
}

// A request fed for 3 iterations with 5 predicted: 5 until it generates, then
// 4, 3, 2, 1, and 1 past its prediction.
TEST(PredictedWork, OneRequestByHand) {
  PredictedWork work;
  work.add(3, 8);  // T0 = 3, K = T0 + 5
  const std::vector<std::int64_t> want = {5, 5, 5, 5, 4, 3, 2, 1, 1, 1};
  for (std::int64_t c = 0; c < 10; ++c) EXPECT_EQ(work.total_at(c), want[static_cast<std::size_t>(c)]) << "clock " << c;
  work.remove(3, 8);
  EXPECT_EQ(work.total_at(10), 0);
}

// A request that leaves without having come is a bookkeeping error, said, not undefined.
TEST(PredictedWork, ARequestThatNeverCameCannotLeave) {
  PredictedWork work;
  work.add(3, 8);
  EXPECT_THROW(work.remove(4, 8), std::logic_error);   // feeding, another start
  EXPECT_THROW(work.remove(0, 20), std::logic_error);  // generating, none there
  EXPECT_THROW(work.remove(0, 0), std::logic_error);   // past its prediction, none there
  EXPECT_EQ(work.total_at(0), 5);
}

}  // namespace
}  // namespace april::sim
