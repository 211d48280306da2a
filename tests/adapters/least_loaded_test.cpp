// The router's index against the scan it replaced: the least-loaded engine,
// ties to the lowest index, after any sequence of load changes (routing, and
// with it every pinned fingerprint, depends on this choice).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "adapters/sim/least_loaded.hpp"

namespace april::adapters {
namespace {

std::size_t scan_least(const std::vector<std::int64_t>& loads) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < loads.size(); ++i) {
    if (loads[i] < loads[best]) best = i;
  }
  return best;
}

TEST(LeastLoaded, MatchesAScanFromTheFrontUnderRandomChanges) {
  for (const std::size_t engines : {1UL, 2UL, 3UL, 7UL, 64UL, 1000UL}) {
    std::mt19937_64 rng(engines);
    LeastLoaded index(engines);
    std::vector<std::int64_t> loads(engines, 0);
    for (int i = 0; i < 20000; ++i) {
      const std::size_t e = rng() % engines;
      // Mostly small steps, as submissions and completions make, with jumps (predicted tokens).
      const std::int64_t load = rng() % 8 == 0 ? static_cast<std::int64_t>(rng() % 1000000)
                                               : std::max<std::int64_t>(0, loads[e] + static_cast<std::int64_t>(rng() % 3) - 1);
      index.set(e, load);
      loads[e] = load;
      ASSERT_EQ(index.least(), scan_least(loads)) << engines << " engines, change " << i;
      ASSERT_EQ(index.load(e), load);
    }
  }
}

TEST(LeastLoaded, TiesGoToTheLowestIndex) {
  LeastLoaded index(5);
  EXPECT_EQ(index.least(), 0U);
  index.set(0, 3);
  index.set(1, 2);
  index.set(3, 2);
  index.set(2, 2);
  index.set(4, 2);
  EXPECT_EQ(index.least(), 1U);
  index.set(1, 5);
  EXPECT_EQ(index.least(), 2U);
}

TEST(LeastLoaded, RefusesALoadItCannotHold) {
  LeastLoaded index(4);
  EXPECT_THROW(index.set(1, -1), std::out_of_range);
  EXPECT_THROW(index.set(1, LeastLoaded::kMaxLoad + 1), std::out_of_range);
  index.set(1, LeastLoaded::kMaxLoad);
  EXPECT_EQ(index.load(1), LeastLoaded::kMaxLoad);
  EXPECT_EQ(index.least(), 0U);
}

}  // namespace
}  // namespace april::adapters
