#include "sim/train_phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/config.hpp"
#include "sim/dp_balance.hpp"

namespace april::sim {

std::string to_string(TrainFramework f) { return f == TrainFramework::Fsdp ? "fsdp" : "megatron"; }

std::int64_t TrainerSetup::gpu_multiple() const {
  std::int64_t m = tensor_parallel * pipeline_parallel * context_parallel;
  if (fsdp_shard_gpus > 0) m = std::lcm(m, fsdp_shard_gpus);
  if (expert_parallel > 1) m = std::lcm(m, expert_parallel);
  return m;
}

void check_trainer_setup(const TrainerSetup& s, const ModelArch& model, const Accelerator& hw) {
  const auto model_parallel = s.tensor_parallel * s.pipeline_parallel * s.context_parallel;
  if (s.gpus % model_parallel != 0) {
    throw base::ConfigError(
        fmt::format("train.tensor_parallel {} x train.pipeline_parallel {} x train.context_parallel {} = {} does "
                    "not divide the trainer's {} GPUs",
                    s.tensor_parallel, s.pipeline_parallel, s.context_parallel, model_parallel, s.gpus));
  }
  if (s.fsdp_shard_gpus > 0 && (s.fsdp_shard_gpus > s.gpus || s.gpus % s.fsdp_shard_gpus != 0)) {
    throw base::ConfigError(fmt::format("train.fsdp_shard_gpus {} does not divide the trainer's {} GPUs", s.fsdp_shard_gpus, s.gpus));
  }
  if (s.pipeline_parallel > model.layers) {
    throw base::ConfigError(
        fmt::format("train.pipeline_parallel {} is more stages than {}'s {} layers", s.pipeline_parallel, model.name, model.layers));
  }
  if (s.tensor_parallel > hw.scale_up_domain_gpus) {
    throw base::ConfigError(fmt::format("train.tensor_parallel {} is wider than {}'s scale-up domain of {} GPUs", s.tensor_parallel,
                                        hw.name, hw.scale_up_domain_gpus));
  }
  if (!(s.optimizer_offload_fraction >= 0 && s.optimizer_offload_fraction <= 1)) {
    throw base::ConfigError(fmt::format("train.optimizer_offload_fraction {} is not in [0, 1]", s.optimizer_offload_fraction));
  }
  if (s.optimizer_offload_fraction > 0 && s.framework != TrainFramework::Megatron) {
    throw base::ConfigError(
        fmt::format("train.optimizer_offload_fraction {} is Megatron's optimizer CPU offload; with train.framework fsdp set it to 0",
                    s.optimizer_offload_fraction));
  }
  if (s.expert_parallel > 1 && (!model.is_moe() || model.routed_experts % s.expert_parallel != 0 || s.gpus % s.expert_parallel != 0)) {
    throw base::ConfigError(fmt::format("train.expert_parallel {} must divide {}'s routed experts ({}) and the trainer's {} GPUs",
                                        s.expert_parallel, model.name, model.routed_experts, s.gpus));
  }
}

namespace {

// A collective's per-GPU bandwidth: inside the scale-up domain when the group
// fits in one, else through each GPU's NIC.
double collective_bytes_s(const Accelerator& hw, std::int64_t group_span_gpus, double efficiency) {
  return (group_span_gpus <= hw.scale_up_domain_gpus ? hw.scale_up_bytes_s : hw.nic_bytes_s) * efficiency;
}

// Parameters each GPU holds: non-expert weights split over TP x PP, routed
// experts over EP x PP (expert tensor parallelism 1, Megatron's default for MoE).
double params_per_gpu(const ModelArch& model, const TrainerSetup& s) {
  const double experts = static_cast<double>(model.moe_layers() * model.routed_experts * model.expert_params());
  const double dense = static_cast<double>(model.total_params()) - experts;
  return dense / static_cast<double>(s.tensor_parallel * s.pipeline_parallel) +
         experts / static_cast<double>(s.expert_parallel * s.pipeline_parallel);
}

// The parameters whose fp32 Adam state each GPU keeps: the distributed
// optimizer (Megatron) splits that state over data-parallel ranks, FSDP over
// its shard group.
double optimizer_params_per_gpu(double shard, const TrainerSetup& s) {
  return s.framework == TrainFramework::Fsdp ? shard / static_cast<double>(s.fsdp_shard()) : shard / static_cast<double>(s.data_parallel());
}

// What an offload moves per GPU: its bf16 weights (FSDP shards them too) and
// the fp32 Adam state on the GPU (master copy, m and v: 12 B per parameter);
// the optimizer's offloaded fraction is in host memory already.
double offloaded_state_bytes(double shard, double optimizer_params, const TrainerSetup& s) {
  const double weights = s.framework == TrainFramework::Fsdp ? optimizer_params : shard;
  const double on_gpu = optimizer_params * (1.0 - s.optimizer_offload_fraction);  // exact at 0: x * 1.0 == x
  return on_gpu * 12.0 + weights * 2.0;
}

}  // namespace

double trainer_params_per_gpu(const ModelArch& model, const TrainerSetup& s) { return params_per_gpu(model, s); }

double trainer_optimizer_params_per_gpu(const ModelArch& model, const TrainerSetup& s) {
  return optimizer_params_per_gpu(params_per_gpu(model, s), s);
}

double trainer_state_per_gpu_bytes(const ModelArch& model, const TrainerSetup& s) {
  const double shard = params_per_gpu(model, s);
  return offloaded_state_bytes(shard, optimizer_params_per_gpu(shard, s), s);
}

TrainPhaseTimes train_phase_times(const ModelArch& model, const Accelerator& hw, const TrainerSetup& s, const TrainBatchShape& b) {
  TrainPhaseTimes t;
  const auto parts = std::max<std::int64_t>(1, b.step_parts);
  t.other_s = s.fixed_s / static_cast<double>(parts);
  if (b.tokens <= 0) return t;
  // A local step's share of the step's optimizer steps and balanced calls.
  const std::int64_t step_minis = std::max<std::int64_t>(1, s.ppo_mini_batches / parts);
  const std::int64_t step_calls = std::max<std::int64_t>(1, s.update_calls / parts);
  const double gpus = static_cast<double>(s.gpus);
  const double dp = static_cast<double>(s.data_parallel());
  const double pp = static_cast<double>(s.pipeline_parallel);
  // Forward FLOPs of the batch: the linear layers for every token, causal
  // attention over its pairs (expanded MLA: training does not absorb).
  const double forward_flops =
      model.linear_flops_per_token() * static_cast<double>(b.tokens) + model.attention_flops_per_token(1, false) * b.attention_pairs;
  const double flop_s = gpus * hw.bf16_flop_s * s.mfu;
  // 1F1B pipeline: (pp - 1) idle slots over m micro-batches per pass
  // (Narayanan et al. 2021, Megatron-LM, section 2.2.1).
  const double tokens_per_pipeline = static_cast<double>(b.tokens) / dp;
  // Stages of unequal depth (61 layers on 4 stages: 16, 15, 15, 15) run at the
  // pace of the deepest.
  const double layers = static_cast<double>(model.layers);
  const double deepest = std::ceil(layers / pp) / (layers / pp);
  // Micro-batches in each of `passes` equal parts of the batch (a mini-batch).
  const auto micro_per_part = [&](double passes) {
    return std::max(1.0, std::ceil(tokens_per_pipeline / passes / static_cast<double>(s.micro_batch_tok)));
  };
  const auto bubble = [&](double passes) {
    if (s.pipeline_parallel == 1) return 1.0;
    return deepest * (1.0 + (pp - 1.0) / (micro_per_part(passes) * static_cast<double>(s.virtual_pipeline)));
  };
  // Micro-batches each GPU runs in one pass over the batch in `passes` parts.
  const auto micro_batches = [&](double passes) { return passes * micro_per_part(passes); };
  // Uneven data-parallel shares: every group waits for the busiest.
  DpImbalance imbalance;
  if (s.balance == DpBalance::Verl && !b.sample_tok.empty()) {
    const DpLayout layout{s.gpus / (s.tensor_parallel * s.pipeline_parallel), s.context_parallel, step_calls, step_minis};
    imbalance = verl_dp_imbalance(b.sample_tok, layout, model.linear_flops_per_token(), model.attention_flops_per_token(1, false));
  }
  const double activation_s = s.activation_passes * model.activation_elements_per_token() * static_cast<double>(b.tokens) * 2.0 /
                              (gpus * hw.hbm_bytes_s * s.hbm_efficiency);
  const double pass_s = forward_flops / flop_s + activation_s;  // one forward over the batch, no bubble
  const double forward_s = pass_s * bubble(1.0) * imbalance.forward;
  // Tensor parallelism: each layer's forward all-reduces its activations twice
  // (after attention and after the MLP; with sequence parallelism an
  // all-gather and a reduce-scatter, the same bytes), the backward twice
  // more, in bf16 over the ring of the TP group, not overlapped with compute
  // (Megatron's default; Narayanan et al. 2021, section 3.2). A pipeline
  // stage holds layers / pp of the layers; the tokens are its DP x CP share.
  double tp_forward_s = 0;
  if (s.tensor_parallel > 1) {
    const double tp = static_cast<double>(s.tensor_parallel);
    const double tokens = static_cast<double>(b.tokens) / (dp * static_cast<double>(s.context_parallel));
    const double bytes = 2.0 * std::ceil(layers / pp) * tokens * static_cast<double>(model.hidden) * 2.0 * 2.0 * (tp - 1.0) / tp;
    tp_forward_s = bytes / collective_bytes_s(hw, s.tensor_parallel, s.link_efficiency);
  }
  const double forward_fixed_s = (s.micro_batch_overhead_s > 0 ? s.micro_batch_overhead_s * micro_batches(1.0) : 0.0) + tp_forward_s;
  if (s.old_logprob) t.old_logprob_s = forward_s + forward_fixed_s;
  if (s.ref_logprob) t.ref_logprob_s = forward_s + forward_fixed_s;
  // Backward is twice the forward's FLOPs (Kaplan et al. 2020: 6N per token in all).
  const double mini = static_cast<double>(step_minis), epochs = static_cast<double>(s.ppo_epochs);
  const double passes = s.full_recompute ? 4.0 : 3.0;
  t.update_s = epochs * passes * pass_s * bubble(mini) * imbalance.update;
  if (s.micro_batch_overhead_s > 0) t.update_s += epochs * 3.0 * s.micro_batch_overhead_s * micro_batches(mini);
  t.update_s += epochs * (passes - 1.0) * tp_forward_s;  // the backward's two, and a recomputed forward's

  const double shard = params_per_gpu(model, s);
  const double steps = mini * epochs;
  const double dp_span = static_cast<double>(s.gpus);  // a DP group strides over every model-parallel group
  const double ring = 2.0 * (dp - 1.0) / dp;
  if (s.framework == TrainFramework::Megatron) {
    // bf16 gradients (Megatron-Core's grad_reduce_in_fp32 is off by default),
    // a ring all-reduce (or the distributed optimizer's reduce-scatter +
    // all-gather, the same bytes) per optimizer step, not overlapped with the backward.
    if (s.data_parallel() > 1)
      t.grad_reduce_s = steps * ring * shard * 2.0 / collective_bytes_s(hw, static_cast<std::int64_t>(dp_span), s.link_efficiency);
  } else {
    // FSDP: every pass all-gathers the parameters within their shard group
    // (forward; again in backward) and reduce-scatters the gradients there,
    // in fp32 (verl's FSDP mixed precision keeps reduce_dtype fp32:
    // verl/workers/fsdp_workers.py), twice a gather's bytes. With replicas
    // (HSDP, verl's fsdp_size below the GPU count) each GPU's fp32 gradient
    // shard is then all-reduced across them. Prefetching hides the
    // collectives behind compute, so only what exceeds it shows.
    // FSDP shards what each GPU's model-parallel rank holds: with TP, PP or
    // EP beside it (torchtitan's 2D/3D layouts) that is params_per_gpu, not the
    // whole model; FSDP's group is the data-parallel GPUs of that rank.
    // (Context parallelism splits sequences, not parameters: verl's Ulysses
    // groups share the FSDP mesh.)
    const double rank_gpus = gpus / static_cast<double>(s.tensor_parallel * s.pipeline_parallel);
    const double shard_gpus = std::min(static_cast<double>(s.fsdp_shard()), rank_gpus);
    const double replicas = std::max(1.0, rank_gpus / shard_gpus);
    const double params = shard;
    const double gather_s = (shard_gpus - 1.0) / shard_gpus * params * 2.0 / collective_bytes_s(hw, s.fsdp_shard(), s.link_efficiency);
    const double replica_s =
        replicas > 1.0 ? 2.0 * (replicas - 1.0) / replicas * params / shard_gpus * 4.0 / collective_bytes_s(hw, s.gpus, s.link_efficiency)
                       : 0.0;
    const double forward_passes = (s.old_logprob ? 1.0 : 0.0) + (s.ref_logprob ? 1.0 : 0.0);
    const double exposed_forward = forward_passes * std::max(0.0, gather_s - forward_s);
    const double exposed_update = steps * std::max(0.0, 4.0 * gather_s + replica_s - t.update_s / steps);
    t.grad_reduce_s = exposed_forward + exposed_update;
  }
  // Adam with fp32 master weights: read and write the master copy, m and v
  // (24 B), read the bf16 gradient and write the bf16 weight (4 B) per
  // parameter; the distributed optimizer (Megatron) splits that state over
  // data-parallel ranks, FSDP over its shard group.
  const double optimizer_params = optimizer_params_per_gpu(shard, s);
  t.optimizer_s = steps * 28.0 * optimizer_params / (hw.hbm_bytes_s * s.hbm_efficiency);
  if (s.optimizer_offload_fraction > 0) {
    // Megatron's hybrid optimizer: the offloaded fraction steps on the CPU
    // (its copies overlapped), the rest on the GPU, one after the other: NeMo
    // RL PR #3628's 50% row (1.216 s) is the sum, 0.752 + 0.5 x 0.926 s.
    const double f = s.optimizer_offload_fraction;
    t.optimizer_s = steps * ((1.0 - f) * 28.0 * optimizer_params / (hw.hbm_bytes_s * s.hbm_efficiency) +
                             f * optimizer_params / s.cpu_optimizer_params_s);
  }
  if (s.offload) {
    // verl / slime colocated: after the rollout the engines release their
    // memory and the trainer loads its bf16 weights (2 B per parameter of its
    // shard; FSDP shards the weights too) and the fp32 Adam state on its GPU
    // (12 B per optimizer parameter, less what Megatron offloads to the CPU);
    // after the update it offloads them and the engines take back their weights.
    const double host = hw.host_link_bytes_s * s.host_link_efficiency;
    t.offload_s = (2.0 * offloaded_state_bytes(shard, optimizer_params, s) + s.engine_weights_per_gpu_bytes) / host;
  }
  return t;
}

}  // namespace april::sim
