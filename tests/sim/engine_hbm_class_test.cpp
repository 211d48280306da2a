// An accelerator's engine HBM class picks the fitted bandwidth fraction its
// engines read at: a hardware file for another H20 SKU that names the H20's
// class is the built-in H20 to the engine model, and one that does not is not.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "sim/engine_knobs.hpp"
#include "test_support.hpp"

namespace april {
namespace {

// The built-in H20's figures (sim/hardware.cpp) under another name.
std::string h20_file(const std::string& engine_hbm_class) {
  const auto path = ::testing::TempDir() + "h20_copy_" + engine_hbm_class + ".json";
  std::ofstream(path) << "{\"name\": \"h20-copy\", \"bf16_dense_TFLOP_s\": 148, \"fp8_dense_TFLOP_s\": 296, \"hbm_MiB\": 97871, "
                         "\"hbm_TB_s\": 4.0, \"scale_up_GB_s\": 450, \"gpus_per_node\": 8, \"nic_Gb_s\": 400, "
                         "\"engine_hbm_class\": \""
                      << engine_hbm_class << "\"}";
  return path;
}

std::int64_t decode_ns(const std::string& hardware) {
  testing::Fixture f("default", {"hardware=" + hardware});
  const auto model = sim::make_iteration_model(f.config);
  return model->iteration_ns(sim::IterationShape{32, 32 * 2000, 0, 0, 0});
}

TEST(EngineHbmClass, AFileOfTheH20sClassDecodesAsTheBuiltInH20) {
  const auto builtin = decode_ns("h20");
  EXPECT_EQ(decode_ns(h20_file("h20")), builtin);
  // The common class reads at engine.hbm_efficiency (0.748), about twice the H20's fitted 0.390: a faster decode.
  EXPECT_LT(static_cast<double>(decode_ns(h20_file("common"))), 0.8 * static_cast<double>(builtin));
}

}  // namespace
}  // namespace april
