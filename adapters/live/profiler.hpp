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
  std::int64_t repeats = 3;  // passes over the grid
  std::uint64_t seed = 1;
  CountdownParams task;
};

// The engine's own per-iteration log over the shapes a rollout produces
// (requests decoding while others are admitted with contexts of one length
// or spread up to the longest a resumed sample has, and decode-only
// iterations between them); train-step times over batch sizes and response
// lengths; weight-copy times. Everything `repeats` times.
adapters::Profile profile_live(const ProfileOptions& options);

}  // namespace april::live
