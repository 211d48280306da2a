#pragma once
// Hardware and model profiles for the roofline iteration-time model.
// Every figure carries its source; see profiles.cpp.
#include <cstdint>
#include <string>
#include <vector>

namespace april::sim {

struct HardwareProfile {
  std::string name;
  double peak_bf16_flop_s = 0;  // dense bf16, per GPU
  double hbm_bytes_s = 0;       // HBM bandwidth, per GPU
  double memory_bytes = 0;      // HBM capacity, per GPU
  std::string source;
};

struct ModelProfile {
  std::string name;
  double params = 0;  // parameters, embeddings included
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  double bytes_per_param = 2;  // bf16 weights
  double kv_bytes_per_elem = 2;  // bf16 KV cache
  std::string source;

  [[nodiscard]] double weight_bytes() const { return params * bytes_per_param; }
  // K and V for every layer and KV head.
  [[nodiscard]] double kv_bytes_per_token() const {
    return 2.0 * static_cast<double>(layers * kv_heads * head_dim) * kv_bytes_per_elem;
  }
};

std::vector<HardwareProfile> builtin_hardware();
std::vector<ModelProfile> builtin_models();
std::vector<std::string> hardware_names();
std::vector<std::string> model_names();
// Throw std::invalid_argument listing the known names.
const HardwareProfile& find_hardware(const std::vector<HardwareProfile>& all, const std::string& name);
const ModelProfile& find_model(const std::vector<ModelProfile>& all, const std::string& name);

}  // namespace april::sim
