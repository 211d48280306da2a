// An accelerator's engine HBM class picks the fitted bandwidth fraction its
// engines read at: a hardware file for another H20 SKU that names the H20's
// class is the built-in H20 to the engine model, and one that does not is not.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine_knobs.hpp"
#include "sim/hardware.hpp"
#include "test_support.hpp"

namespace april {
namespace {

std::string h20_file(const std::string& engine_hbm_class) {
  const auto& a = sim::resolve_accelerator("h20");
  const nlohmann::json doc = {{"name", "h20-copy"},
                              {"bf16_dense_TFLOP_s", a.bf16_flop_s / 1e12},
                              {"fp8_dense_TFLOP_s", a.fp8_flop_s / 1e12},
                              {"hbm_MiB", a.hbm_bytes / sim::kBytesPerMiB},
                              {"hbm_TB_s", a.hbm_bytes_s / 1e12},
                              {"scale_up_GB_s", a.scale_up_bytes_s / 1e9},
                              {"gpus_per_node", a.gpus_per_node},
                              {"nic_Gb_s", a.nic_bytes_s * 8 / 1e9},
                              {"engine_hbm_class", engine_hbm_class}};
  const auto path = ::testing::TempDir() + "h20_copy_" + engine_hbm_class + ".json";
  std::ofstream(path) << doc.dump(1);
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
