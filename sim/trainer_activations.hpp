#pragma once
// Activations a trainer GPU holds at its peak during an update: a lower
// bound, under the recompute both frameworks default to. verl checkpoints
// every decoder layer (enable_gradient_checkpointing, on in its
// hf_model.yaml); slime's scripts set --recompute-granularity full
// --recompute-method uniform --recompute-num-layers 1. Under full recompute a
// GPU keeps each of its layers' input (2 B x hidden per token) and, at its
// peak, also the output head's logits or one layer recomputed for its
// backward. Turning recompute off only adds to this, so the bound holds
// either way. Not counted (each only adds): FSDP's gathered layer weights,
// the collectives' buffers, the allocator's fragmentation, and under 1F1B the
// first pipeline stage's further micro-batches in flight (up to PP of them:
// Korthikanti et al. 2022, section 4.2.3), as how many a step has depends on
// the batch's lengths.
#include <cstdint>
#include <string>

#include "sim/model_arch.hpp"
#include "sim/train_phases.hpp"

namespace april::sim {

// What the bound needs beyond the trainer's layout.
struct ActivationInputs {
  // The longest response the rollout returns (max_response_len): a
  // micro-batch holds at least that sample, whatever else it packs, since
  // the long tail reaches the cap.
  std::int64_t longest_response_tok = 0;
  // The log-probabilities come without materialising the logits (verl's
  // use_fused_kernels, a fused linear cross entropy): no logits term.
  bool fused_logits = false;
};

struct TrainerActivationBytes {
  double per_gpu = 0;         // the busiest GPU's peak
  double checkpoints = 0;     // layer inputs kept for the recompute, on the stage with the most layers
  double logits = 0;          // the output head's logits on the last stage (0 when fused)
  double layer = 0;           // one layer's saved activations while it is recomputed
  double tokens_per_gpu = 0;  // tokens of one micro-batch a GPU holds, at least
  std::string how;            // the arithmetic, for an error or a report
};

// Bytes one layer saves for its backward per token, bf16, on one GPU with the
// whole layer (no tensor parallelism), beyond its input (the checkpoint): the
// largest of the model's layer kinds. Attention keeps its projections' input,
// q, k, v and its output; a gated MLP its projections' input, the gate and up
// outputs and their product (3 x intermediate, as Megatron's fused SwiGLU
// saves; HF's eager MLP keeps the activation too); a MoE layer that for each
// of the k routed experts (the token's copy included) and its shared experts.
double layer_activation_bytes_per_token(const ModelArch& model);

// Tokens a GPU holds: min(train.micro_batch_tok, the longest response over
// the context- or Ulysses-parallel size). verl's ppo_max_token_len_per_gpu
// and slime's --max-tokens-per-gpu are each multiplied by that size for a
// micro-batch those GPUs then split (verl dp_actor.py and ulysses.py, slime
// dp_schedule.py), and the micro-batch holding the longest response holds at
// least it. Megatron's sequence parallelism splits them over TP. Logits:
// verl's bf16 logits of the whole vocabulary (2 B; flash-attn's cross
// entropy works in place), slime's fp32 logits of its V / TP share and their
// exponentials (8 B; its loss asserts fp32 logits).
TrainerActivationBytes trainer_activation_bytes(const ModelArch& model, const TrainerSetup& setup, const ActivationInputs& in);

}  // namespace april::sim
