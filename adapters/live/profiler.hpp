#pragma once
// `april profile`: measures the live engine and trainer for calibration.
// Plain C++ header; the measurements use the same engine, model and trainer
// classes as `april live`.
#include <cstdint>
#include <string>

#include "adapters/calibration.hpp"
#include "adapters/live/countdown_task.hpp"

namespace april::live {

struct ProfileOptions {
  std::string model_size = "small";
  std::string device = "cpu";
  std::int64_t slots = 64;
  std::int64_t threads = 2;
  std::int32_t max_response_len = 48;
  std::int64_t repeats = 6;  // measurements per configuration
  std::uint64_t seed = 1;
  CountdownParams task;
};

// Iteration times over a grid of running requests (decode, KV growing) and of
// admitted requests x prompt lengths (prefill); train-step times over batch
// sizes; weight-copy times.
adapters::Profile profile_live(const ProfileOptions& options);

}  // namespace april::live
