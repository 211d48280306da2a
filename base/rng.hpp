#pragma once
// Our own generator and distributions: std:: distributions differ between
// standard libraries, so drawn values could not be pinned in tests.
// Each consumer owns a stream derived from (seed, stream name).
#include <cstdint>
#include <string_view>

namespace april::base {

class Rng {
 public:
  Rng(std::uint64_t seed, std::string_view stream);

  std::uint64_t next_u64();                   // xoshiro256**
  double uniform01();                         // [0, 1), 53 random bits
  double uniform(double lo, double hi);       // [lo, hi)
  double normal(double mean, double stddev);  // Box-Muller, one draw per call
  double lognormal(double log_median, double sigma);
  bool bernoulli(double p);

 private:
  std::uint64_t s_[4];
};

}  // namespace april::base
