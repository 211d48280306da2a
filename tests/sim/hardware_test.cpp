// Accelerators' memory is the total the driver reports: what SGLang's and
// vLLM's memory fractions take their share of. A hardware file gives it as
// nvidia-smi prints it (hbm_MiB) or in 1e9 bytes (hbm_GB), never both.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/config.hpp"
#include "base/json_file.hpp"
#include "sim/engine_memory.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"

namespace april::sim {
namespace {

std::string hardware_json(const std::string& memory_fields) {
  return "{\n  \"name\": \"mine\",\n  \"bf16_dense_TFLOP_s\": 989,\n" + memory_fields +
         "  \"hbm_TB_s\": 3.35,\n  \"scale_up_GB_s\": 450,\n  \"gpus_per_node\": 8,\n  \"nic_Gb_s\": 400\n}\n";
}

Accelerator parse(const std::string& text) { return accelerator_from_json(base::parse_json_text(text, "mine.json", "hardware file")); }

TEST(Hardware, BuiltinMemoryIsTheDriversTotalInMiB) {
  // nvidia-smi's totals (sources in sim/hardware.cpp): an "80 GB" H100 is 81,559 MiB.
  EXPECT_DOUBLE_EQ(resolve_accelerator("h100").hbm_bytes, 81559.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(resolve_accelerator("h200").hbm_bytes, 143771.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(resolve_accelerator("h20").hbm_bytes, 97871.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(resolve_accelerator("a100").hbm_bytes, 81920.0 * 1024 * 1024);
  // Every built-in reports more than its datasheet's round figure read as 1e9
  // bytes, by less than 10%: close to that figure in GiB.
  const std::map<std::string, double> datasheet_GB = {{"a100", 80},    {"h100", 80},    {"h200", 141},     {"h20", 96},
                                                      {"h800", 80},    {"b200", 180},   {"gb200", 186},    {"mi300x", 192},
                                                      {"mi325x", 256}, {"mi355x", 288}, {"h100-hbm2e", 96}};
  ASSERT_EQ(datasheet_GB.size(), builtin_accelerators().size());
  for (const auto& a : builtin_accelerators()) {
    const double ratio = a.hbm_bytes / (datasheet_GB.at(a.name) * 1e9);
    if (a.name == "h100-hbm2e") {  // its driver's total is not published: the datasheet's figure
      EXPECT_NEAR(ratio, 1.0, 1e-4);
      continue;
    }
    EXPECT_GT(ratio, 1.0) << a.name;
    EXPECT_LT(ratio, 1.1) << a.name;
  }
  EXPECT_NEAR(resolve_accelerator("h100").hbm_bytes / 80e9, 1.069, 0.001);
  EXPECT_NEAR(resolve_accelerator("mi300x").hbm_bytes / 192e9, 1.074, 0.001);
}

TEST(Hardware, AShownAcceleratorReadsBackTheSame) {
  // `april hardware show NAME --json` writes these fields; a file of them is the same accelerator.
  const auto h200 = resolve_accelerator("h200");
  const std::string text =
      "{\"name\": \"h200\", \"bf16_dense_TFLOP_s\": 989, \"fp8_dense_TFLOP_s\": 1979, \"hbm_MiB\": 143771, "
      "\"hbm_TB_s\": 4.8, \"scale_up_GB_s\": 450, \"gpus_per_node\": 8, \"scale_up_domain_gpus\": 8, "
      "\"nic_Gb_s\": 400, \"host_link_GB_s\": 64}";
  const auto back = parse(text);
  EXPECT_DOUBLE_EQ(back.hbm_bytes, h200.hbm_bytes);
  EXPECT_DOUBLE_EQ(back.host_link_bytes_s, h200.host_link_bytes_s);
  EXPECT_DOUBLE_EQ(back.nic_bytes_s, h200.nic_bytes_s);
}

// The H20's engines read HBM at their own fitted fraction; a file for another
// H20 SKU (the 141 GB one) names that class, and a class april has no fit for
// is refused by file, line and field.
TEST(Hardware, AFileNamesItsEngineHbmClass) {
  EXPECT_EQ(resolve_accelerator("h20").engine_hbm_class, "h20");
  EXPECT_EQ(resolve_accelerator("h100").engine_hbm_class, "common");
  EXPECT_EQ(parse(hardware_json("  \"hbm_MiB\": 81559,\n")).engine_hbm_class, "common");
  EXPECT_EQ(parse(hardware_json("  \"hbm_GB\": 141,\n  \"engine_hbm_class\": \"h20\",\n")).engine_hbm_class, "h20");
  try {
    parse(hardware_json("  \"hbm_GB\": 141,\n  \"engine_hbm_class\": \"H20\",\n"));
    FAIL() << "an unknown class was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mine.json:5: field 'engine_hbm_class'"), std::string::npos) << e.what();
  }
}

TEST(Hardware, AFileGivesMemoryInMiBOrInGB) {
  EXPECT_DOUBLE_EQ(parse(hardware_json("  \"hbm_MiB\": 81559,\n")).hbm_bytes, 81559.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse(hardware_json("  \"hbm_GB\": 80,\n")).hbm_bytes, 80e9);
}

TEST(Hardware, BothMemoryFieldsOrNeitherIsRefusedByFileLineAndField) {
  try {
    parse(hardware_json("  \"hbm_MiB\": 81559,\n  \"hbm_GB\": 80,\n"));
    FAIL() << "both fields were accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mine.json:4: field 'hbm_MiB'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not both"), std::string::npos) << e.what();
  }
  try {
    parse(hardware_json(""));
    FAIL() << "a file without memory was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mine.json: give hbm_MiB"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse(hardware_json("  \"hbm_MiB\": 0.5,\n")), base::ConfigError);
  EXPECT_THROW(parse(hardware_json("  \"hbm_MiB\": \"81559\",\n")), base::ConfigError);
}

// A misspelt field would leave the default in its place; a repeated one would
// keep the last silently. Both are refused by file, line and field.
TEST(Hardware, MisspeltAndRepeatedFieldsAreRefused) {
  try {
    parse(hardware_json("  \"hbm_MiB\": 81559,\n  \"host_link_GBs\": 32,\n"));
    FAIL() << "a misspelt field was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mine.json:5: field 'host_link_GBs': unknown field"), std::string::npos) << e.what();
  }
  try {
    parse(hardware_json("  \"hbm_MiB\": 81559,\n  \"hbm_MiB\": 1000,\n"));
    FAIL() << "a repeated field was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mine.json:4: key 'hbm_MiB' is given twice"), std::string::npos) << e.what();
  }
}

TEST(Hardware, TheKvPoolIsTheFrameworksShareOfTheReportedTotal) {
  // SGLang: mem_fraction_static x the device's total, less the weights. Qwen3-4B
  // at TP 2 on H100 at 0.85: (0.85 x 81,559 MiB - 4.02 B x 2 B / 2) per GPU.
  const auto model = resolve_model("qwen3-4b");
  const auto hw = resolve_accelerator("h100");
  const auto mem = engine_memory(model, hw, {2, 0.85, DType::BF16, DType::BF16});
  const double weights_per_gpu = model.weight_bytes(DType::BF16) / 2;
  EXPECT_DOUBLE_EQ(mem.usable_per_gpu_bytes, 0.85 * 81559.0 * 1024 * 1024);
  EXPECT_NEAR(mem.kv_per_gpu_bytes, 0.85 * 81559.0 * 1024 * 1024 - weights_per_gpu, 1.0);
}

}  // namespace
}  // namespace april::sim
