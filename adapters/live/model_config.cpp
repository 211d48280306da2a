#include "adapters/live/model_config.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::live {

std::int64_t ModelConfig::parameters() const {
  const std::int64_t hd = head_dim();
  const std::int64_t attn = d_model * n_heads * hd * 2 + d_model * n_kv_heads * hd * 2 + (qkv_bias ? (n_heads + 2 * n_kv_heads) * hd : 0) +
                            (qk_norm ? 2 * hd : 0);
  const std::int64_t mlp = 3 * d_model * d_ff;
  return n_layers * (attn + mlp + 2 * d_model) + (tie_embeddings ? 1 : 2) * vocab * d_model + d_model;
}

std::vector<std::string> model_sizes() { return {"tiny", "small", "medium", "large"}; }

ModelConfig model_config(const std::string& size, std::int64_t vocab, std::int64_t max_seq) {
  ModelConfig c;
  c.name = size;
  c.vocab = vocab;
  c.max_seq = max_seq;
  if (size == "tiny") {
    c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.d_ff = 64;
  } else if (size == "small") {
    c.d_model = 384, c.n_layers = 6, c.n_heads = 6, c.n_kv_heads = 2, c.d_ff = 1024;
  } else if (size == "medium") {
    c.d_model = 1024, c.n_layers = 12, c.n_heads = 16, c.n_kv_heads = 4, c.d_ff = 2816;
  } else if (size == "large") {
    c.d_model = 2048, c.n_layers = 16, c.n_heads = 16, c.n_kv_heads = 4, c.d_ff = 5632;
  } else {
    throw std::invalid_argument(fmt::format("unknown model size '{}'; known: {}", size, fmt::join(model_sizes(), ", ")));
  }
  return c;
}

}  // namespace april::live
