#pragma once
// A train step as verl and slime report it (docs/design.md section 7): the
// old-logprob forward over the batch (and the reference model's, when a KL
// term is on), the update (forward + backward) over PPO mini-batches and
// epochs with a gradient reduction and an optimizer step per mini-batch, and,
// on a colocated cluster, moving the trainer's and the engines' state between
// GPU and host memory. Megatron (TP x PP x CP x DP, EP for experts) or FSDP.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/hardware.hpp"
#include "sim/model_arch.hpp"

namespace april::sim {

// A training batch: `samples` samples, `tokens` prompt + response tokens in
// all, the longest `longest_tok`, and sum over samples of L (L + 1) / 2, the
// query-key pairs of causal attention (`attention_pairs`).
struct TrainBatchShape {
  std::int64_t samples = 0, tokens = 0, longest_tok = 0;
  double attention_pairs = 0;
  // Each sample's prompt + response tokens in batch order (train.balance
  // verl reads them; empty: the work falls evenly).
  std::vector<std::int64_t> sample_tok{};
  // The batch is one of this many equal local steps of a step's batch
  // (async.local_steps): it takes that share of the step's mini-batches,
  // update calls and fixed cost.
  std::int64_t step_parts = 1;
};

// Seconds of each phase of one train step; what steps.csv reports.
struct TrainPhaseTimes {
  double old_logprob_s = 0;  // forward over the batch with the rollout's policy weights
  double ref_logprob_s = 0;  // the reference model's forward (KL), when on
  double update_s = 0;       // forward + backward over every mini-batch and epoch, pipeline bubble included
  double grad_reduce_s = 0;  // data-parallel gradient reduction (Megatron) or parameter gathers not hidden (FSDP)
  double optimizer_s = 0;    // Adam steps
  double offload_s = 0;      // colocated: trainer state onto and off the GPUs, engine weights back
  double other_s = 0;        // the fixed cost per step, or a calibrated linear model's whole time
  [[nodiscard]] double total_s() const {
    return old_logprob_s + ref_logprob_s + update_s + grad_reduce_s + optimizer_s + offload_s + other_s;
  }
};

enum class TrainFramework { Megatron, Fsdp };
// How the batch's work falls on the data-parallel groups (sim/dp_balance.hpp).
enum class DpBalance { Even, Verl };

struct TrainerSetup {
  TrainFramework framework = TrainFramework::Megatron;
  std::int64_t gpus = 8;
  std::int64_t tensor_parallel = 1, pipeline_parallel = 1, context_parallel = 1, expert_parallel = 1;
  // FSDP: GPUs the state is sharded over (verl fsdp_size); the others hold
  // replicas (HSDP). 0: all of the trainer's GPUs (ZeRO-3).
  std::int64_t fsdp_shard_gpus = 0;
  [[nodiscard]] std::int64_t fsdp_shard() const { return fsdp_shard_gpus > 0 ? fsdp_shard_gpus : gpus; }
  double mfu = 0.35;  // achieved fraction of the BF16 peak in forward and backward
  // The elementwise work beside the matmuls is bound by HBM, not compute:
  // each forward pass moves every token's layer activations
  // (ModelArch::activation_elements_per_token, bf16) this many times in and
  // out of HBM (norms, residual adds, rotary, the gated activation). That is
  // why one MFU does not hold across accelerators of different FLOP-to-byte
  // ratios (an A100 reaches a higher fraction of its peak than an H100).
  double activation_passes = 0;
  std::int64_t ppo_mini_batches = 1;  // optimizer steps per epoch
  std::int64_t ppo_epochs = 1;
  bool old_logprob = true;
  bool ref_logprob = false;
  std::int64_t micro_batch_tok = 16384;  // tokens per micro-batch per GPU (verl ppo_max_token_len_per_gpu)
  // Interleaved 1F1B: model chunks per pipeline stage (Megatron
  // --num-layers-per-virtual-pipeline-stage); the bubble shrinks by this factor.
  std::int64_t virtual_pipeline = 1;
  // Fixed cost of each micro-batch's forward (twice that for its backward):
  // kernel launches, the framework's bookkeeping, small collectives.
  double micro_batch_overhead_s = 0;
  // Full activation recomputation (verl's enable_gradient_checkpointing,
  // Megatron's --recompute-granularity full): the backward runs the forward
  // again, 4 forwards' FLOPs per update instead of 3.
  bool full_recompute = false;
  bool offload = false;  // colocated: state to host after the update, back before it
  // Megatron's optimizer CPU offload (--optimizer-cpu-offload with
  // --optimizer-offload-fraction F and --use-precision-aware-optimizer;
  // megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py): F of the
  // distributed optimizer's parameters keep their fp32 master copy, fp32
  // gradient and both fp32 Adam moments in pinned host memory (16 B each) and
  // take their Adam step on the CPU. 0: all on the GPUs.
  double optimizer_offload_fraction = 0;
  // Parameters per second one GPU's process steps on the CPU, the gradient's
  // copy out and the weight's copy back included (overlapped, as slime and
  // verl set --overlap-cpu-optimizer-d2h-h2d). Fitted on NVIDIA-NeMo/RL PR
  // #3628's single-H100 Qwen3-0.6B row: 100% offload with overlap took
  // 1.678 s a step against 0.752 s without, 596,049,920 parameters in
  // 0.926 s.
  double cpu_optimizer_params_s = 6.44e8;
  // Host memory of one trainer node: the offloaded optimizer and, colocated,
  // the offloaded weights must fit in it. NVIDIA's DGX H100 and H200 system
  // descriptions (mlcommons inference_results_v4.1, closed/NVIDIA/systems)
  // give "2 TB" (32 x 64 GB DIMMs, 2,199 GB if those are GiB); 2,048 GB leaves
  // the rest to the OS and the frameworks' own buffers. No H800 or H20 server
  // figure is published; a GB200 tray of 4 GPUs has less.
  double host_memory_bytes = 2048e9;
  double host_link_efficiency = 0.8;  // achieved fraction of the host link in pinned copies
  double hbm_efficiency = 0.8;
  double link_efficiency = 0.77;  // collectives over the scale-up link or the NICs
  double fixed_s = 0;
  DpBalance balance = DpBalance::Even;
  std::int64_t update_calls = 1;  // balance verl: calls the batch is trained in, each balanced alone
  // Engine weights per GPU to bring back after the update (colocated, offload on).
  double engine_weights_per_gpu_bytes = 0;

  [[nodiscard]] std::int64_t data_parallel() const { return gpus / (tensor_parallel * pipeline_parallel * context_parallel); }
  // The trainer's GPU count must be a multiple of this: its model-parallel
  // group, its FSDP shard group and its expert-parallel group all divide it.
  [[nodiscard]] std::int64_t gpu_multiple() const;
};

// Checks that the parallel sizes divide the GPUs and the model; throws
// base::ConfigError naming `prefix` keys (e.g. "train.tensor_parallel").
void check_trainer_setup(const TrainerSetup& s, const ModelArch& model, const Accelerator& hw);

TrainPhaseTimes train_phase_times(const ModelArch& model, const Accelerator& hw, const TrainerSetup& s, const TrainBatchShape& b);
// The trainer's state on each GPU that an offload to host memory moves (its
// bf16 weights and the fp32 Adam state not already on the host), in bytes.
double trainer_state_per_gpu_bytes(const ModelArch& model, const TrainerSetup& s);
// Parameters of a GPU's shard, the mean over pipeline stages (Megatron: TP x
// PP of the dense weights, EP x PP of the experts; FSDP: all of them).
double trainer_params_per_gpu(const ModelArch& model, const TrainerSetup& s);
// The parameters whose fp32 Adam state one GPU keeps (the distributed
// optimizer's share, or FSDP's shard), wherever that state lives. Megatron's
// share is taken over data parallelism alone, for the experts too: Megatron
// shards dense state over DP x CP and expert state over GPUs / (EP x PP), so
// with CP > 1 or EP > 1 this is an upper bound.
double trainer_optimizer_params_per_gpu(const ModelArch& model, const TrainerSetup& s);

std::string to_string(TrainFramework f);

}  // namespace april::sim
