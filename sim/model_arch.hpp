#pragma once
// A decoder-only transformer's architecture, read from a Hugging Face
// `config.json`, and what the simulator derives from it: parameter counts
// (total and activated per token), weight and KV-cache bytes, FLOPs per
// token, and the weights an MoE decode iteration reads. Counting conventions
// are the model cards' (docs/design.md section 7); each formula
// cites the modelling code it follows in model_arch.cpp.
#include <cstdint>
#include <string>
#include <vector>

namespace april::base {
struct JsonFile;
}

namespace april::sim {

enum class AttentionKind {
  GroupedQuery,  // multi-head / grouped-query: K and V per KV head are cached
  MultiLatent,   // DeepSeek MLA: a compressed latent and the rope key are cached
};

// Bytes per element of a storage type.
enum class DType { BF16, FP8 };
double bytes_per_element(DType t);
std::string to_string(DType t);
DType dtype_from_string(const std::string& s, const std::string& where);

struct ModelArch {
  std::string name;          // built-in name or the config's path
  std::string architecture;  // "Qwen3MoeForCausalLM"
  std::string model_type;    // "qwen3_moe"
  std::string source;        // where the config comes from

  std::int64_t vocab = 0, hidden = 0, layers = 0;
  bool tied_embeddings = false;

  // Attention.
  AttentionKind attention = AttentionKind::GroupedQuery;
  std::int64_t q_heads = 0, kv_heads = 0, head_dim = 0;
  bool qkv_bias = false;  // biases on q, k and v projections
  bool o_bias = false;    // bias on the output projection
  bool qk_norm = false;   // RMSNorm of head_dim on queries and keys (Qwen3, GLM-4.5)
  // MLA only (DeepSeek-V2/V3, Kimi-K2); q_lora_rank 0 = queries projected directly.
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;

  // Feed-forward: gated (SwiGLU) MLPs of three matrices.
  std::int64_t intermediate = 0;  // dense layers
  bool mlp_bias = false;
  // Mixture of experts; routed_experts 0 = dense model.
  std::int64_t routed_experts = 0, experts_per_token = 0, moe_intermediate = 0;
  std::int64_t shared_experts = 0;       // shared experts per MoE layer
  std::int64_t shared_intermediate = 0;  // intermediate size of each shared expert
  bool shared_expert_gate = false;       // Qwen2-MoE: a sigmoid gate (hidden -> 1) on the shared expert
  bool router_bias = false;              // noaux_tc routing: e_score_correction_bias per expert
  std::vector<bool> moe_layer;           // per layer: MoE (true) or dense MLP
  std::int64_t mtp_layers = 0;           // multi-token-prediction modules, reported apart
  DType checkpoint_dtype = DType::BF16;  // as published (quantization_config fp8 -> FP8)

  // Counts, exact.
  [[nodiscard]] std::int64_t attention_params_per_layer() const;
  [[nodiscard]] std::int64_t expert_params() const;         // one routed expert
  [[nodiscard]] std::int64_t shared_expert_params() const;  // all shared experts of a layer, gate included
  [[nodiscard]] std::int64_t router_params() const;         // one MoE layer's router
  [[nodiscard]] std::int64_t dense_mlp_params() const;
  [[nodiscard]] std::int64_t layer_params(std::int64_t layer) const;
  [[nodiscard]] std::int64_t layer_active_params(std::int64_t layer) const;
  [[nodiscard]] std::int64_t embedding_params() const;  // input embedding + output head (once when tied) + final norm
  [[nodiscard]] std::int64_t total_params() const;
  [[nodiscard]] std::int64_t active_params() const;
  [[nodiscard]] std::int64_t mtp_params() const;  // DeepSeek-V3 style MTP modules, with their own embedding and head
  [[nodiscard]] std::int64_t moe_layers() const;
  [[nodiscard]] bool is_moe() const { return routed_experts > 0; }

  [[nodiscard]] double weight_bytes(DType t) const { return static_cast<double>(total_params()) * bytes_per_element(t); }
  // Cached bytes per token over all layers.
  [[nodiscard]] std::int64_t kv_bytes_per_token(DType kv) const;

  // FLOPs of one token's pass through the linear layers (2 per
  // multiply-accumulate of every activated weight matrix, the output head
  // included, the embedding lookup and norms not).
  [[nodiscard]] double linear_flops_per_token() const;
  // Sum over layers of the activation widths a token carries through each
  // (hidden, plus the MLP's intermediate: the activated experts' and shared
  // experts' in an MoE layer): what the trainer's elementwise work (norms,
  // residual adds, the gated activation, rotary) reads and writes.
  [[nodiscard]] double activation_elements_per_token() const;
  // Attention FLOPs of one query token against `context_tok` cached tokens
  // (QK^T and AV). MLA decode runs the absorbed form over the latent; prefill
  // the expanded one (DeepSeek-V2 paper, section 2.1.3).
  [[nodiscard]] double attention_flops_per_token(std::int64_t context_tok, bool mla_absorbed) const;

  // Expected distinct routed experts a layer runs for `tokens` tokens each
  // routed to k of E experts, uniform routing assumed: E * (1 - (1 - k/E)^tokens).
  [[nodiscard]] double expected_distinct_experts(std::int64_t tokens) const;
  // Weights an iteration of `tokens` tokens reads from memory: everything but
  // the routed experts, plus the distinct experts it touches in each MoE layer.
  [[nodiscard]] double weights_read_bytes(std::int64_t tokens, DType t) const;
};

// E * (1 - (1 - k/E)^tokens): the distinct experts `tokens` tokens touch when
// each is routed uniformly to k of E (0 for no tokens).
double expected_distinct_experts(double experts, double per_token, std::int64_t tokens);

// Reads a parsed config.json; `name` and `source` are kept for reports. Throws
// base::ConfigError naming the file and field on anything it cannot model.
ModelArch model_from_config(const base::JsonFile& config, const std::string& name, const std::string& source);
// Reads `path`, a config.json or a folder holding one.
ModelArch read_model_config(const std::string& path);

}  // namespace april::sim
