#include "sim/trainer_activations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace april::sim {
namespace {

constexpr double kBf16 = 2.0;
// verl: bf16 logits of the whole vocabulary (flash-attn cross entropy with
// inplace_backward, verl/utils/torch_functional.py); slime: fp32 logits of
// the vocabulary's V / TP share and the softmax beside them (its
// compute_log_probs upcasts; THUDM/slime#2253: chunking the log-probs does
// not lower the training peak).
constexpr double kFsdpLogitBytes = 2.0;
constexpr double kMegatronLogitBytes = 8.0;

// Elements per token one attention block saves: its norm's input and the
// projections' input (hidden each), q, k, v and the attention output.
double attention_elements(const ModelArch& m) {
  const auto h = static_cast<double>(m.hidden);
  if (m.attention == AttentionKind::MultiLatent) {
    const auto heads = static_cast<double>(m.q_heads);
    const double qk = heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double v = heads * static_cast<double>(m.v_head_dim);
    // The low-rank query and key-value latents are the up-projections' inputs.
    const auto latents = static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim);
    return 2.0 * h + latents + 2.0 * qk + 2.0 * v;
  }
  const double q = static_cast<double>(m.q_heads * m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  return 2.0 * h + q + 2.0 * kv + q;
}

// A gated MLP of `intermediate` saves its input, the gate and up outputs, the
// activation and the product.
double gated_mlp_elements(double intermediate) { return 4.0 * intermediate; }

}  // namespace

double layer_activation_bytes_per_token(const ModelArch& m) {
  const auto h = static_cast<double>(m.hidden);
  double mlp = 0;
  bool has_dense = !m.is_moe(), has_moe = false;
  for (const bool moe : m.moe_layer) (moe ? has_moe : has_dense) = true;
  if (has_dense) mlp = std::max(mlp, 2.0 * h + gated_mlp_elements(static_cast<double>(m.intermediate)));
  if (has_moe || m.is_moe()) {
    const auto k = static_cast<double>(m.experts_per_token);
    const double routed = k * (h + gated_mlp_elements(static_cast<double>(m.moe_intermediate)));
    const double shared = static_cast<double>(m.shared_experts) * gated_mlp_elements(static_cast<double>(m.shared_intermediate));
    mlp = std::max(mlp, 2.0 * h + routed + shared);
  }
  return kBf16 * (attention_elements(m) + mlp);
}

TrainerActivationBytes trainer_activation_bytes(const ModelArch& m, const TrainerSetup& s) {
  TrainerActivationBytes out;
  const bool megatron = s.framework == TrainFramework::Megatron;
  const double tp = megatron ? static_cast<double>(s.tensor_parallel) : 1.0;
  const double pp = megatron ? static_cast<double>(s.pipeline_parallel) : 1.0;
  const auto tokens = static_cast<double>(s.micro_batch_tok);
  out.tokens_per_gpu = tokens / tp;
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / pp);
  const double checkpoint_per_layer = out.tokens_per_gpu * kBf16 * static_cast<double>(m.hidden);
  out.layer = out.tokens_per_gpu * layer_activation_bytes_per_token(m);
  out.logits = megatron ? tokens * static_cast<double>(m.vocab) / tp * kMegatronLogitBytes
                        : tokens * static_cast<double>(m.vocab) * kFsdpLogitBytes;
  // The first stage: PP micro-batches in flight; the last: one, and the logits.
  const double first = pp * stage_layers * checkpoint_per_layer + out.layer;
  const double last = stage_layers * checkpoint_per_layer + std::max(out.logits, out.layer);
  out.per_gpu = std::max(first, last);
  const bool first_peaks = pp > 1 && first >= last;
  out.checkpoints = (first_peaks ? pp : 1.0) * stage_layers * checkpoint_per_layer;
  const bool logits_peak = !first_peaks && out.logits >= out.layer;
  const std::string extra =
      logits_peak ? fmt::format("{:.1f} GB of logits ({:.0f} B per token per vocabulary entry{})", out.logits / 1e9,
                                megatron ? kMegatronLogitBytes : kFsdpLogitBytes, megatron ? " of its V / TP" : "")
                  : fmt::format("{:.1f} GB for one layer recomputed", out.layer / 1e9);
  out.how = fmt::format("{:.0f} tokens a GPU: {:.1f} GB of layer inputs kept for the recompute ({:.0f} layers{}) + {}", out.tokens_per_gpu,
                        out.checkpoints / 1e9, stage_layers, first_peaks ? fmt::format(" x {:.0f} micro-batches in flight", pp) : "",
                        extra);
  return out;
}

}  // namespace april::sim
