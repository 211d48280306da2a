#pragma once
// Sizes of the live backend's decoder-only transformer (Llama/Qwen family:
// RMSNorm, rotary embeddings, grouped-query attention, SwiGLU). Plain C++: no
// torch here, so the CLI and configs can name sizes without including torch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace april::live {

// Llama 3's rotary frequency scaling ("rope_type": "llama3"): frequencies
// whose wavelength exceeds original_max_pos / low_freq_factor are divided by
// `factor`, those under original_max_pos / high_freq_factor are kept, and the
// band between is interpolated.
struct Llama3RopeScaling {
  double factor = 0;
  double low_freq_factor = 0;
  double high_freq_factor = 0;
  std::int64_t original_max_pos = 0;
};

struct ModelConfig {
  std::string name;
  // "" for april's own sizes; else the Hugging Face class the weights came
  // from (Qwen3ForCausalLM, Qwen2ForCausalLM, LlamaForCausalLM): the rotary
  // tables are then computed in float32 as Hugging Face computes them.
  std::string architecture;
  std::int64_t vocab = 0;
  std::int64_t d_model = 0;
  std::int64_t n_layers = 0;
  std::int64_t n_heads = 0;
  std::int64_t n_kv_heads = 0;
  std::int64_t d_ff = 0;
  std::int64_t max_seq = 0;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  // Where the families differ. Qwen3 sets a head width of its own (128 for
  // Qwen3-0.6B's 1024 / 16 = 64) and normalises each head's q and k; Qwen2
  // has biases on q, k and v; small models share the embedding with the LM
  // head.
  std::int64_t explicit_head_dim = 0;  // 0: d_model / n_heads
  bool qk_norm = false;
  bool qkv_bias = false;
  bool tie_embeddings = false;
  std::optional<Llama3RopeScaling> llama3_rope;

  [[nodiscard]] std::int64_t head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : d_model / n_heads; }
  // Parameters, embeddings and LM head included (once when tied).
  [[nodiscard]] std::int64_t parameters() const;
};

// tiny (tests), small (~10M, CPU runs), medium (~150M) and large (~1B) for GPUs.
std::vector<std::string> model_sizes();
ModelConfig model_config(const std::string& size, std::int64_t vocab, std::int64_t max_seq);

}  // namespace april::live
