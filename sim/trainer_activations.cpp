#include "sim/trainer_activations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace april::sim {
namespace {

constexpr double kBf16Bytes = 2.0;
// verl: bf16 logits of the whole vocabulary (flash-attn cross entropy with
// inplace_backward, verl/utils/torch_functional.py); slime: fp32 logits of
// the vocabulary's V / TP share and their exponentials beside them (its
// log-probabilities upcast; THUDM/slime#2253: chunking the log-probabilities
// does not lower the training peak).
constexpr double kFsdpLogitBytes = 2.0;
constexpr double kMegatronLogitBytes = 8.0;

// Elements per token one attention block saves beyond its input: its
// projections' input, q, k, v and the attention output.
double attention_elements(const ModelArch& m) {
  const auto h = static_cast<double>(m.hidden);
  if (m.attention == AttentionKind::MultiLatent) {
    const auto heads = static_cast<double>(m.q_heads);
    const double qk = heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double v = heads * static_cast<double>(m.v_head_dim);
    // The low-rank query and key-value latents are the up-projections' inputs.
    const auto latents = static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim);
    return h + latents + 2.0 * qk + 2.0 * v;
  }
  const auto q = static_cast<double>(m.q_heads * m.head_dim);
  const auto kv = static_cast<double>(m.kv_heads * m.head_dim);
  return h + q + 2.0 * kv + q;
}

// A gated MLP of `intermediate` saves the gate and up outputs (one fused
// projection's output in Megatron) and their product.
double gated_mlp_elements(double intermediate) { return 3.0 * intermediate; }

}  // namespace

double layer_activation_bytes_per_token(const ModelArch& m) {
  const auto h = static_cast<double>(m.hidden);
  // Without a per-layer list every layer is of the model's one kind.
  bool has_dense = m.moe_layer.empty() && !m.is_moe(), has_moe = m.moe_layer.empty() && m.is_moe();
  for (const bool moe : m.moe_layer) {
    if (moe) {
      has_moe = true;
    } else {
      has_dense = true;
    }
  }
  // The MLP's norm's input and its projections' input come first.
  double mlp = 0;
  if (has_dense) mlp = std::max(mlp, 2.0 * h + gated_mlp_elements(static_cast<double>(m.intermediate)));
  if (has_moe) {
    const auto k = static_cast<double>(m.experts_per_token);
    const double routed = k * (h + gated_mlp_elements(static_cast<double>(m.moe_intermediate)));
    const double shared = static_cast<double>(m.shared_experts) * gated_mlp_elements(static_cast<double>(m.shared_intermediate));
    mlp = std::max(mlp, 2.0 * h + routed + shared);
  }
  return kBf16Bytes * (attention_elements(m) + mlp);
}

TrainerActivationBytes trainer_activation_bytes(const ModelArch& m, const TrainerSetup& s, const ActivationInputs& in) {
  TrainerActivationBytes out;
  const bool megatron = s.framework == TrainFramework::Megatron;
  const double tp = megatron ? static_cast<double>(s.tensor_parallel) : 1.0;
  const double pp = megatron ? static_cast<double>(s.pipeline_parallel) : 1.0;
  const double sequence_split = static_cast<double>(std::max<std::int64_t>(1, s.context_parallel));
  const double tokens = std::min(static_cast<double>(s.micro_batch_tok), static_cast<double>(in.longest_response_tok) / sequence_split);
  out.tokens_per_gpu = tokens / tp;
  const double checkpoint_per_layer = out.tokens_per_gpu * kBf16Bytes * static_cast<double>(m.hidden);
  out.layer = out.tokens_per_gpu * layer_activation_bytes_per_token(m);
  if (!in.fused_logits) {
    out.logits = megatron ? tokens * static_cast<double>(m.vocab) / tp * kMegatronLogitBytes
                          : tokens * static_cast<double>(m.vocab) * kFsdpLogitBytes;
  }
  // Some stage runs at least ceil(L / PP) layers (however Megatron spreads
  // them), and the last stage holds the logits.
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / pp);
  out.checkpoints = stage_layers * checkpoint_per_layer;
  const double deepest_stage_bytes = out.checkpoints + (pp > 1 ? out.layer : std::max(out.logits, out.layer));
  const double last_stage_bytes = pp > 1 ? out.logits : deepest_stage_bytes;
  out.per_gpu = std::max(deepest_stage_bytes, last_stage_bytes);
  const bool logits_peak = last_stage_bytes > deepest_stage_bytes || (pp == 1 && out.logits >= out.layer);
  const std::string logits_how = fmt::format("{:.1f} GB of logits ({:.0f} B per token per vocabulary entry{})", out.logits / 1e9,
                                             megatron ? kMegatronLogitBytes : kFsdpLogitBytes, megatron && tp > 1 ? " of its V / TP" : "");
  if (pp > 1 && logits_peak) {
    out.how = fmt::format("{:.0f} tokens a GPU: the last stage's {}", out.tokens_per_gpu, logits_how);
  } else {
    out.how = fmt::format("{:.0f} tokens a GPU: {:.1f} GB of layer inputs kept for the recompute ({:.0f} layers) + {}", out.tokens_per_gpu,
                          out.checkpoints / 1e9, stage_layers,
                          logits_peak ? logits_how : fmt::format("{:.1f} GB for one layer recomputed", out.layer / 1e9));
  }
  return out;
}

}  // namespace april::sim
