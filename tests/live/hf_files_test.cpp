// The checkpoint files read without torch: safetensors headers checked
// before any data is touched, and config.json read into the live model or
// refused by field.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "adapters/live/checkpoint/hf_config.hpp"
#include "base/atomic_file.hpp"
#include "base/config.hpp"
#include "hf/safetensors.hpp"

namespace april::live {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("april_hf_files_" + name);
  base::remove_tree(dir.string());
  fs::create_directories(dir);
  return dir.string();
}

// A safetensors file from a header text and a data section, as written.
std::string raw_file(const std::string& dir, const std::string& header, const std::string& data) {
  const auto path = dir + "/m.safetensors";
  std::string bytes(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  base::write_file_atomically(path, bytes + header + data);
  return path;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Safetensors, WrittenTensorsReadBackWithTheirBytesShapesAndMetadata) {
  const auto dir = fresh_dir("roundtrip");
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const std::uint16_t b[3] = {0x3f80, 0x4000, 0xc040};  // bf16 1, 2, -3
  write_safetensors(dir + "/x.safetensors", {{"a", StDtype::F32, {2, 3}, a, sizeof a}, {"b.bias", StDtype::BF16, {3}, b, sizeof b}},
                    {{"format", "pt"}});
  const SafetensorsFile f(dir + "/x.safetensors");
  ASSERT_EQ(f.tensors().size(), 2u);
  const auto* ta = f.find("a");
  ASSERT_NE(ta, nullptr);
  EXPECT_EQ(ta->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ta->bytes, sizeof a);
  EXPECT_EQ(std::memcmp(ta->data, a, sizeof a), 0);
  EXPECT_EQ(f.find("b.bias")->dtype, StDtype::BF16);
  EXPECT_EQ(std::memcmp(f.find("b.bias")->data, b, sizeof b), 0);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  // The header is padded so that data starts 8-byte aligned in the file.
  std::ifstream in(dir + "/x.safetensors", std::ios::binary);
  std::uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u);
}

TEST(Safetensors, DamagedFilesAreRefusedNamingFileAndTensor) {
  const auto dir = fresh_dir("damaged");
  const std::string four(4, '\0');
  EXPECT_NE(error_of([&] { SafetensorsFile(raw_file(dir, "", "")); }).find("header"), std::string::npos);
  EXPECT_NE(error_of([&] { SafetensorsFile(raw_file(dir, "{\"a\": {", "")); }).find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of([&] {
              SafetensorsFile(raw_file(dir, R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", four));
            }).find("/a/dtype: 'F8_E4M3' is not read"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              SafetensorsFile(raw_file(dir, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", four));
            }).find("/a/data_offsets: ends at byte 8 of a 4-byte data section"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              SafetensorsFile(raw_file(dir, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", four));
            }).find("4 bytes for shape [2] of F32 (8 expected)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              SafetensorsFile(raw_file(
                  dir, R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[2,6]}})",
                  four + four));
            }).find("overlap"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              SafetensorsFile(raw_file(dir, R"({"a":{"dtype":"F32","shape":[1 ,2, 4611686018427387904],"data_offsets":[0,4]}})", four));
            }).find("more elements than any file holds"),
            std::string::npos);
  // A header length past the file, and past the format's 100 MB limit.
  std::string bytes(8, '\0');
  const std::uint64_t huge = 1ull << 40;
  std::memcpy(bytes.data(), &huge, 8);
  base::write_file_atomically(dir + "/big.safetensors", bytes);
  EXPECT_NE(error_of([&] { SafetensorsFile(dir + "/big.safetensors"); }).find("over the format's limit"), std::string::npos);
  EXPECT_NE(error_of([&] { SafetensorsFile(dir + "/missing.safetensors"); }).find("missing.safetensors: cannot open"), std::string::npos);
}

// config.json files of the models april ships (sim/models, from the Hub).
HfModelConfig read_shipped(const std::string& name) {
  const auto dir = fresh_dir("cfg_" + name);
  fs::copy_file(std::string(APRIL_SIM_MODELS_DIR) + "/" + name + ".json", dir + "/config.json");
  return read_hf_config(dir);
}

TEST(HfConfig, PublishedDenseConfigsReadAsTheirFamilies) {
  const auto q = read_shipped("qwen3-0.6b");
  EXPECT_EQ(q.model.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(q.model.head_dim(), 128);  // explicit: 1024 / 16 would be 64
  EXPECT_TRUE(q.model.qk_norm);
  EXPECT_TRUE(q.model.tie_embeddings);
  EXPECT_EQ(q.model.rope_theta, 1000000.0);
  EXPECT_EQ(q.model.n_kv_heads, 8);
  // Hugging Face's count for Qwen3-0.6B: 596,049,920 parameters (tied).
  EXPECT_EQ(q.model.parameters(), 596049920);
  const auto r1 = read_shipped("r1-distill-qwen-1.5b");
  EXPECT_TRUE(r1.model.qkv_bias);
  EXPECT_FALSE(r1.model.tie_embeddings);
  const auto l = read_shipped("llama-3.1-8b");
  ASSERT_TRUE(l.model.llama3_rope.has_value());
  EXPECT_EQ(l.model.llama3_rope->factor, 8.0);
  EXPECT_EQ(l.model.llama3_rope->original_max_pos, 8192);
  EXPECT_EQ(l.model.rope_theta, 500000.0);
}

TEST(HfConfig, ModelsItWouldComputeWronglyAreRefusedByField) {
  EXPECT_NE(error_of([] { read_shipped("qwen3-30b-a3b"); }).find("not loaded by the live backend"), std::string::npos);
  EXPECT_NE(error_of([] { read_shipped("deepseek-v3"); }).find("'DeepseekV3ForCausalLM' is not loaded"), std::string::npos);
  const auto dir = fresh_dir("cfg_edits");
  const auto with = [&](const std::string& json) {
    base::write_file_atomically(dir + "/config.json", json);
    return error_of([&] { read_hf_config(dir); });
  };
  const std::string base_fields =
      R"("hidden_size":64,"intermediate_size":96,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100)";
  EXPECT_NE(with(R"({"architectures":["Qwen3ForCausalLM"],"num_experts":8,)" + base_fields + "}")
                .find("field 'num_experts': Qwen3ForCausalLM is a mixture-of-experts model"),
            std::string::npos);
  EXPECT_NE(with(R"({"architectures":["LlamaForCausalLM"],"rope_scaling":{"rope_type":"yarn","factor":4},)" + base_fields + "}")
                .find("rope type 'yarn'"),
            std::string::npos);
  EXPECT_NE(with(R"({"architectures":["Qwen2ForCausalLM"],"use_sliding_window":true,)" + base_fields + "}").find("sliding-window"),
            std::string::npos);
  EXPECT_NE(with(R"({"architectures":["LlamaForCausalLM"],"attention_bias":true,)" + base_fields + "}").find("attention biases"),
            std::string::npos);
  EXPECT_NE(with(R"({"architectures":["LlamaForCausalLM"],"hidden_act":"gelu",)" + base_fields + "}").find("'gelu'"), std::string::npos);
  EXPECT_NE(with(R"({"architectures":["LlamaForCausalLM"],"num_key_value_heads":3,)" + base_fields + "}").find("does not divide"),
            std::string::npos);
  EXPECT_NE(with(R"({"architectures":["LlamaForCausalLM"]})").find("vocab_size"), std::string::npos);
  // transformers 5.x's form of the rotary settings reads as 4.x's.
  base::write_file_atomically(dir + "/config.json", R"({"architectures":["LlamaForCausalLM"],)" + base_fields +
                                                        R"(,"rope_parameters":{"rope_type":"llama3","rope_theta":500000.0,"factor":8.0,
                                                        "low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":64}})");
  const auto v5 = read_hf_config(dir);
  EXPECT_EQ(v5.model.rope_theta, 500000.0);
  ASSERT_TRUE(v5.model.llama3_rope.has_value());
  EXPECT_EQ(v5.model.llama3_rope->original_max_pos, 64);
}

}  // namespace
}  // namespace april::live
