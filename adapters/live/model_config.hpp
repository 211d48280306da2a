#pragma once
// Sizes of the live backend's decoder-only transformer (Llama/Qwen family:
// RMSNorm, rotary embeddings, grouped-query attention, SwiGLU). Plain C++: no
// torch here, so the CLI and configs can name sizes without including torch.
#include <cstdint>
#include <string>
#include <vector>

namespace april::live {

struct ModelConfig {
  std::string name;
  std::int64_t vocab = 0;
  std::int64_t d_model = 0;
  std::int64_t n_layers = 0;
  std::int64_t n_heads = 0;
  std::int64_t n_kv_heads = 0;
  std::int64_t d_ff = 0;
  std::int64_t max_seq = 0;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;

  [[nodiscard]] std::int64_t head_dim() const { return d_model / n_heads; }
  // Parameters, embeddings and LM head included (untied).
  [[nodiscard]] std::int64_t parameters() const;
};

// tiny (tests), small (~10M, CPU runs), medium (~150M) and large (~1B) for GPUs.
std::vector<std::string> model_sizes();
ModelConfig model_config(const std::string& size, std::int64_t vocab, std::int64_t max_seq);

}  // namespace april::live
