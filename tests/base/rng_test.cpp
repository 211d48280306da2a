#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/rng.hpp"

namespace april::base {
namespace {

TEST(Rng, SameSeedAndStreamGiveTheSameValues) {
  Rng a(42, "workload"), b(42, "workload"), c(42, "other"), d(43, "workload");
  const auto x = a.next_u64();
  EXPECT_EQ(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  EXPECT_NE(x, d.next_u64());
}

// Drawn values are pinned: our own distributions must not change silently
// (std:: distributions would differ between standard libraries).
TEST(Rng, DrawnValuesArePinned) {
  Rng r(1, "pin");
  EXPECT_EQ(r.next_u64(), 4757802453915304370ULL);
  EXPECT_DOUBLE_EQ(r.uniform01(), 0.78897925090597854);
  EXPECT_DOUBLE_EQ(r.normal(0.0, 1.0), -0.38776512009568553);
  EXPECT_DOUBLE_EQ(r.lognormal(std::log(1000.0), 1.0), 2173.941419784589);
}

TEST(Rng, MomentsAreRight) {
  Rng r(7, "moments");
  const int n = 200000;
  double sum = 0, sum2 = 0;
  std::vector<double> logs;
  for (int i = 0; i < n; ++i) {
    const double z = r.normal(2.0, 3.0);
    sum += z;
    sum2 += z * z;
  }
  const double mean = sum / n;
  const double var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 2.0, 0.03);
  EXPECT_NEAR(std::sqrt(var), 3.0, 0.03);
  int below = 0;
  for (int i = 0; i < n; ++i) below += r.lognormal(std::log(500.0), 1.0) < 500.0 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(below) / n, 0.5, 0.01);  // the median is exp(mu)
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace april::base
