#include "sim/checkpoint_tensors.hpp"

namespace april::sim {

namespace {

// One tensor per nn.Linear weight, bias and RMSNorm weight of the modelling
// files the parameter counts follow (sim/model_arch.cpp).
void attention(const ModelArch& m, std::vector<std::int64_t>& out) {
  const auto h = m.hidden;
  if (m.attention == AttentionKind::MultiLatent) {
    // modeling_deepseek_v3: q_a_proj, q_a_layernorm, q_b_proj (or q_proj),
    // kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj.
    const auto qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      out.insert(out.end(), {h * m.q_lora_rank, m.q_lora_rank, m.q_lora_rank * m.q_heads * qk_head});
    } else {
      out.push_back(h * m.q_heads * qk_head);
    }
    out.insert(out.end(), {h * (m.kv_lora_rank + m.qk_rope_head_dim), m.kv_lora_rank,
                           m.kv_lora_rank * m.q_heads * (m.qk_nope_head_dim + m.v_head_dim), m.q_heads * m.v_head_dim * h});
    return;
  }
  const auto q = m.q_heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  out.push_back(h * q);  // q_proj
  if (m.qkv_bias) out.push_back(q);
  for (int i = 0; i < 2; ++i) {  // k_proj, v_proj
    out.push_back(h * kv);
    if (m.qkv_bias) out.push_back(kv);
  }
  out.push_back(q * h);  // o_proj
  if (m.o_bias) out.push_back(h);
  if (m.qk_norm) out.insert(out.end(), {m.head_dim, m.head_dim});
}

void mlp(std::int64_t hidden, std::int64_t inter, bool bias, std::vector<std::int64_t>& out) {
  out.push_back(hidden * inter);  // gate_proj
  if (bias) out.push_back(inter);
  out.push_back(hidden * inter);  // up_proj
  if (bias) out.push_back(inter);
  out.push_back(inter * hidden);  // down_proj
  if (bias) out.push_back(hidden);
}

}  // namespace

std::vector<std::int64_t> checkpoint_tensor_elements(const ModelArch& m) {
  std::vector<std::int64_t> out;
  out.push_back(m.vocab * m.hidden);  // embed_tokens
  for (std::int64_t l = 0; l < m.layers; ++l) {
    attention(m, out);
    out.insert(out.end(), {m.hidden, m.hidden});  // input and post-attention norms
    if (!m.moe_layer[static_cast<std::size_t>(l)]) {
      mlp(m.hidden, m.intermediate, m.mlp_bias, out);
      continue;
    }
    out.push_back(m.routed_experts * m.hidden);  // the router
    if (m.router_bias) out.push_back(m.routed_experts);
    for (std::int64_t e = 0; e < m.routed_experts; ++e) mlp(m.hidden, m.moe_intermediate, false, out);
    // Shared experts: one MLP of their summed width (DeepSeek's shared_experts,
    // Qwen2-MoE's shared_expert), and Qwen2-MoE's gate on it.
    if (m.shared_experts > 0) mlp(m.hidden, m.shared_experts * m.shared_intermediate, false, out);
    if (m.shared_expert_gate) out.push_back(m.hidden);
  }
  out.push_back(m.hidden);  // the final norm
  if (!m.tied_embeddings) out.push_back(m.vocab * m.hidden);
  return out;
}

}  // namespace april::sim
