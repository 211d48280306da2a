// The live run's memory estimate, worked by hand from the backend's shapes.
#include <gtest/gtest.h>

#include "adapters/live/live_memory.hpp"

namespace april {
namespace {

TEST(LiveMemory, KvCacheAndWeightsFromTheModelsShapes) {
  live::LiveMemoryInputs in;
  in.model = live::model_config("small", 34, 16387);  // the countdown task's vocab, max_seq = 3 + 16384
  in.slots = 64;
  const auto e = live::estimate_live_memory(in);
  // K and V, 6 layers x 64 slots x 2 KV heads x 16387 positions x 64 dims, float32.
  EXPECT_DOUBLE_EQ(e.kv_cache_bytes, 2.0 * 6 * 64 * 2 * 16387 * 64 * 4);
  // Trainer: weights, gradients, two AdamW moments; the engine's float32 copy.
  EXPECT_DOUBLE_EQ(e.weights_bytes, static_cast<double>(in.model.parameters()) * (16 + 4));
  EXPECT_EQ(e.activation_bytes, 0.0);  // no batch given

  in.engine_bf16 = true;
  in.reference_model = true;
  const auto half = live::estimate_live_memory(in);
  EXPECT_DOUBLE_EQ(half.kv_cache_bytes, e.kv_cache_bytes / 2);
  EXPECT_DOUBLE_EQ(half.weights_bytes, static_cast<double>(in.model.parameters()) * (16 + 2 + 4));
}

TEST(LiveMemory, ActivationsGrowWithTheSquareOfTheLength) {
  const auto m = live::model_config("small", 34, 4096);
  const double short_batch = live::train_activation_bytes(m, 256, 36);
  const double long_batch = live::train_activation_bytes(m, 256, 3600);
  EXPECT_GT(long_batch, 3 * 100 * short_batch);  // 100x the tokens, and each attends to 100x the keys
  EXPECT_EQ(live::train_activation_bytes(m, 0, 36), 0.0);
}

TEST(LiveMemory, ARunTooLargeIsRefusedWithItsParts) {
  live::LiveMemoryInputs in;
  in.model = live::model_config("small", 34, 16387);
  in.slots = 4096;
  try {
    live::check_live_memory(live::estimate_live_memory(in), std::uint64_t{24} << 30, "april live");
    FAIL() << "a 384 GiB KV cache passed";
  } catch (const std::runtime_error& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("april live needs about"), std::string::npos) << what;
    EXPECT_NE(what.find("KV cache 384.07 GiB"), std::string::npos) << what;
    EXPECT_NE(what.find("more than the 24.00 GiB"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(live::check_live_memory(live::estimate_live_memory(in), 0, "april live"));  // unknown limit: unchecked
}

}  // namespace
}  // namespace april
