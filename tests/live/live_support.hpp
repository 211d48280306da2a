#pragma once
// What the live backend's tests share: the tiny model, the device they run
// on (cpu unless APRIL_LIVE_DEVICE says otherwise: scripts/gpu-build-and-test.sh
// runs them on cuda), and small live and profile options.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/live_options.hpp"
#include "adapters/live/model_config.hpp"
#include "adapters/live/profiler.hpp"

namespace april::live::testing {

inline ModelConfig tiny(std::int64_t max_seq = 64) { return model_config("tiny", 24, max_seq); }

// The device the tests run on: cpu unless APRIL_LIVE_DEVICE says otherwise.
// Weights are always drawn on the CPU (the same numbers on every device) and
// moved by whatever serves or trains them.
inline std::string device_name() {
  const char* d = std::getenv("APRIL_LIVE_DEVICE");
  return d != nullptr && *d != '\0' ? d : "cpu";
}
inline torch::Device test_device() { return parse_device(device_name()); }

inline Transformer make_model(std::uint64_t seed) {
  torch::manual_seed(seed);
  Transformer m(tiny());
  m->eval();
  return m;
}

inline std::vector<std::int32_t> run_alone(KvEngine& e, GenRequest r) {
  e.add(std::move(r));
  for (;;) {
    auto done = e.step();
    if (!done.empty()) return done[0].tokens;
  }
}

inline LiveOptions tiny_live() {
  LiveOptions o;
  o.model_size = "tiny";
  o.slots = 16;
  o.max_response_len = 16;
  o.exact_prefill = false;
  o.threads = 1;
  o.seed = 3;
  o.device = device_name();
  return o;
}

// One pass of the tiny model's profile, for a live batch of `batch_samples`.
inline ProfileOptions tiny_profile(std::int64_t slots, std::int32_t max_response_len, std::int64_t batch_samples) {
  ProfileOptions o;
  o.model_size = "tiny";
  o.device = device_name();
  o.slots = slots;
  o.max_response_len = max_response_len;
  o.repeats = 1;
  o.batch_samples = batch_samples;
  return o;
}

}  // namespace april::live::testing
