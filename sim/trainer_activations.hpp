#pragma once
// Activations a trainer GPU holds at its peak during an update, a lower bound
// under the recompute both frameworks default to: verl checkpoints every
// decoder layer (enable_gradient_checkpointing, on in its hf_model.yaml), and
// slime's scripts set --recompute-granularity full --recompute-method uniform
// --recompute-num-layers 1. Under full recompute a GPU keeps each layer's
// input (2 B x hidden per token) for every layer it runs, and at its peak
// also one of: the output head's logits, or one layer recomputed for its
// backward. Turning recompute off only adds to this, so the bound holds
// either way. Not counted (each only adds): FSDP's gathered layer weights,
// the collectives' buffers, the allocator's fragmentation.
#include <string>

#include "sim/model_arch.hpp"
#include "sim/train_phases.hpp"

namespace april::sim {

struct TrainerActivationBytes {
  double per_gpu = 0;             // the busiest GPU's peak: checkpoints + max(logits, one layer)
  double checkpoints = 0;         // layer inputs kept for the recompute
  double logits = 0;              // the output head's logits on the last stage
  double layer = 0;               // one layer's saved activations while it is recomputed
  double tokens_per_gpu = 0;      // tokens a GPU holds of one micro-batch
  std::string how;                // the arithmetic, for an error or a report
};

// Bytes one layer saves for its backward per token, bf16, on one GPU with the
// whole layer (no tensor parallelism): the largest of the model's layer kinds.
// Attention keeps its norm's input, the projections' input, q, k, v and the
// attention output; a gated MLP its norm's and projections' input, the gate
// and up outputs, the activation and the product (4 x intermediate); a MoE
// layer that for each of its k routed experts (the token's copy included) and
// for its shared experts.
double layer_activation_bytes_per_token(const ModelArch& model);

// tokens_per_gpu: micro_batch_tok (verl's ppo_max_token_len_per_gpu and
// slime's --max-tokens-per-gpu are each multiplied by the Ulysses or context
// parallel size for a micro-batch that those GPUs then split, so each holds
// micro_batch_tok: verl dp_actor.py and ulysses.py, slime dp_schedule.py).
// Megatron's sequence parallelism splits each of those over TP; under 1F1B
// the first pipeline stage holds PP micro-batches of its layers (Korthikanti
// et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", section 4.2.3) and the last one the logits. Logits: verl computes
// bf16 logits of the whole vocabulary (2 B; flash-attn's cross entropy works
// in place; use_fused_kernels drops them, which leaves the layer term), slime
// fp32 logits of its V / TP share and their softmax (8 B).
TrainerActivationBytes trainer_activation_bytes(const ModelArch& model, const TrainerSetup& setup);

}  // namespace april::sim
