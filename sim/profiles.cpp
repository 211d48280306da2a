#include "sim/profiles.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::sim {

std::vector<HardwareProfile> builtin_hardware() {
  constexpr double T = 1e12;
  constexpr double GB = 1e9;
  return {
      {"h100", 989 * T, 3.35 * T, 80 * GB, "NVIDIA H100 SXM5 datasheet: 989 TFLOP/s dense BF16, 3.35 TB/s HBM3, 80 GB"},
      {"h200", 989 * T, 4.8 * T, 141 * GB, "NVIDIA H200 SXM datasheet: 989 TFLOP/s dense BF16, 4.8 TB/s HBM3e, 141 GB"},
      {"mi300x", 1307 * T, 5.3 * T, 192 * GB, "AMD Instinct MI300X datasheet: 1307 TFLOP/s dense BF16, 5.3 TB/s HBM3, 192 GB"},
      {"a100", 312 * T, 2.0 * T, 80 * GB, "NVIDIA A100 SXM4 80GB datasheet: 312 TFLOP/s dense BF16, 2.0 TB/s HBM2e, 80 GB"},
  };
}

std::vector<ModelProfile> builtin_models() {
  return {
      {"qwen3-4b", 4.02e9, 36, 2560, 32, 8, 128, 2, 2,
       "Qwen/Qwen3-4B config.json: 36 layers, hidden 2560, 32 query / 8 KV heads, head_dim 128; model card: 4.0B parameters"},
      {"qwen3-8b", 8.19e9, 36, 4096, 32, 8, 128, 2, 2,
       "Qwen/Qwen3-8B config.json: 36 layers, hidden 4096, 32 query / 8 KV heads, head_dim 128; model card: 8.2B parameters"},
      {"r1-distill-qwen-1.5b", 1.78e9, 28, 1536, 12, 2, 128, 2, 2,
       "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B config.json (Qwen2 architecture): 28 layers, hidden 1536, "
       "12 query / 2 KV heads, head_dim 128; 1.78B parameters with untied embeddings"},
  };
}

std::vector<std::string> hardware_names() {
  std::vector<std::string> out;
  for (const auto& h : builtin_hardware()) out.push_back(h.name);
  return out;
}

std::vector<std::string> model_names() {
  std::vector<std::string> out;
  for (const auto& m : builtin_models()) out.push_back(m.name);
  return out;
}

const HardwareProfile& find_hardware(const std::vector<HardwareProfile>& all, const std::string& name) {
  for (const auto& h : all) {
    if (h.name == name) return h;
  }
  throw std::invalid_argument(fmt::format("unknown hardware '{}'; known: {}", name, fmt::join(hardware_names(), ", ")));
}

const ModelProfile& find_model(const std::vector<ModelProfile>& all, const std::string& name) {
  for (const auto& m : all) {
    if (m.name == name) return m;
  }
  throw std::invalid_argument(fmt::format("unknown model '{}'; known: {}", name, fmt::join(model_names(), ", ")));
}

}  // namespace april::sim
