#include "sim/train_sync_knobs.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "sim/checkpoint_tensors.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/cluster_topology.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/fitted_defaults.hpp"
#include "sim/hardware.hpp"
#include "sim/scenario_inputs.hpp"
#include "sim/sync_methods.hpp"
#include "sim/sync_paths.hpp"

namespace april::sim {

namespace {

// Upper bounds far past any real cluster; they keep derived nanoseconds and
// byte counts finite and inside int64 (TimeNs).
constexpr double kMaxFixedCost_s = 1e7;      // ~115 days
constexpr double kMaxPerTokenCost_us = 1e6;  // 1 s per token
constexpr double kMinBandwidth_GB_s = 1e-6;  // 1 kB/s
constexpr double kMaxBandwidth_GB_s = 1e9;
// sync.per_transfer_ms and sync.per_transfer_ms_per_node_doubling's defaults:
// `april reproduce --fit` on examples/published/verl-weight-sync-per-tensor.json,
// the first on its one-node 7B row, the second on its 4-node 30B row; together
// they predict the 16-node 235B row within 2.8% (docs/published-runs.md).
constexpr double kFittedPerTransfer_ms = 0.2541;
constexpr double kFittedPerTransferPerNodeDoubling_ms = 0.2582;

}  // namespace

void declare_train_sync_knobs(base::ConfigSchema& s) {
  using base::KnobType;
  s.add({keys::kTrainTimeModel.name, KnobType::String, std::string("phases"), "",
         "phases (old-logprob forward, update over PPO mini-batches and epochs, gradient reduction, optimizer, offload; "
         "train.*), flops (6 * activated params * tokens / (mfu * peak * GPUs) + fixed_s), linear (calibrated: "
         "train.linear_*) or zero",
         base::one_of({"phases", "flops", "linear", "zero"})});
  s.add({keys::kTrainFramework.name, KnobType::String, std::string("megatron"), "",
         "phases: megatron (TP x PP x CP x DP, gradients all-reduced per optimizer step; slime) or fsdp (ZeRO-3 gathers "
         "hidden behind compute where they can be; verl's default)",
         base::one_of({"megatron", "fsdp"})});
  s.add({keys::kTrainHardware.name, KnobType::String, std::string(""), "",
         "disaggregated: the trainer's accelerator where it is not the engines' (`hardware`): a built-in accelerator or "
         "a hardware file with as many GPUs per node; empty = hardware. Sets the trainer's FLOP/s, HBM and links, and its "
         "nodes' links in topology.preset=cluster",
         [] {
           auto v = builtin_or_file(builtin_accelerator_names());
           v.accepts = "empty or " + v.accepts;
           v.check = [inner = v.check](const base::ConfigValue& value) -> std::optional<std::string> {
             const auto* text = std::get_if<std::string>(&value);
             if (text != nullptr && text->empty()) return std::nullopt;
             return inner(value);
           };
           return v;
         }()});
  s.add({keys::kTrainTensorParallel.name, KnobType::Int, std::int64_t{1}, "GPUs", "phases, megatron: tensor parallel size (inside a node)",
         base::in_range(1, 1024)});
  s.add({keys::kTrainPipelineParallel.name, KnobType::Int, std::int64_t{1}, "GPUs", "phases, megatron: pipeline stages (1F1B bubble)",
         base::in_range(1, 1024)});
  s.add({keys::kTrainContextParallel.name, KnobType::Int, std::int64_t{1}, "GPUs",
         "phases: GPUs one sequence is split over: megatron's context parallel, or fsdp's Ulysses sequence parallel (verl "
         "ulysses_sequence_parallel_size); data parallel = GPUs / (TP x PP x CP)",
         base::in_range(1, 1024)});
  s.add({keys::kTrainFsdpShardGpus.name, KnobType::Int, std::int64_t{0}, "GPUs",
         "phases, fsdp: GPUs the weights, gradients and Adam state are sharded over (verl fsdp_size); the trainer's other "
         "GPUs hold replicas whose gradient shards are all-reduced each optimizer step (HSDP); 0 = all of them (ZeRO-3)",
         base::in_range(0, 1 << 20)});
  s.add({keys::kTrainExpertParallel.name, KnobType::Int, std::int64_t{1}, "GPUs", "phases, MoE: GPUs the routed experts are spread over",
         base::in_range(1, 1 << 16)});
  s.add({keys::kTrainPpoMiniBatches.name, KnobType::Int, std::int64_t{1}, "",
         "phases: optimizer steps per epoch (verl: train_batch_size / ppo_mini_batch_size; slime: "
         "rollout_batch_size x n / global_batch_size)",
         base::in_range(1, 1 << 20)});
  s.add(
      {keys::kTrainPpoEpochs.name, KnobType::Int, std::int64_t{1}, "", "phases: passes over the batch per step", base::in_range(1, 1024)});
  s.add({keys::kTrainBalance.name, KnobType::String, std::string("even"), "",
         "phases: how the batch's work falls on the data-parallel groups: even (each takes the mean) or verl (each update "
         "call's rows split into one token-balanced partition per GPU, Karmarkar-Karp as verl's balance_batch, a sequence-"
         "parallel group taking its GPUs' partitions in order and the mini-batches cut from them in order; a mini-batch "
         "takes as long as its busiest group, a forward as the busiest group's whole share)",
         base::one_of({"even", "verl"})});
  s.add({keys::kTrainUpdateCalls.name, KnobType::Int, std::int64_t{1}, "",
         "phases, balance verl: update calls a step's batch is trained in, each balanced alone and holding "
         "ppo_mini_batches / update_calls mini-batches (verl's fully-async trainer: trigger_parameter_sync_step local "
         "steps per sync; 1 for a synchronous trainer)",
         base::in_range(1, 1 << 20)});
  s.add({keys::kTrainOldLogprob.name,
         KnobType::Bool,
         true,
         "",
         "phases: recompute the batch's log-probabilities with the rollout's weights before the update (verl, slime)",
         {}});
  s.add(
      {keys::kTrainRefLogprob.name, KnobType::Bool, false, "", "phases: a reference-model forward over the batch (KL loss or reward)", {}});
  s.add({keys::kTrainMicroBatchTok.name, KnobType::Int, std::int64_t{16384}, "tok",
         "phases: tokens per micro-batch per GPU (verl ppo_max_token_len_per_gpu, slime --max-tokens-per-gpu); sets the "
         "pipeline's micro-batches and the activations april plan's memory check counts",
         base::in_range(1, 1 << 30)});
  s.add({keys::kTrainOffload.name,
         KnobType::Bool,
         true,
         "",
         "phases, colocated: the trainer's weights and Adam state leave the GPUs after each update and return before the "
         "next, and the engines' weights come back (verl / slime colocated); off on a disaggregated cluster",
         {}});
  s.add({keys::kTrainFusedLogits.name,
         KnobType::Bool,
         false,
         "",
         "april plan's memory check: the log-probabilities are computed without materialising the logits (verl "
         "use_fused_kernels, a fused linear cross entropy), so no logits are counted; off: verl's bf16 logits, slime's "
         "fp32 ones",
         {}});
  s.add({keys::kTrainOptimizerOffloadFraction.name, KnobType::Double, 0.0, "",
         "phases, Megatron: fraction of the optimizer's parameters whose fp32 master, gradient and Adam moments live in "
         "host memory and step on the CPU (--optimizer-cpu-offload --optimizer-offload-fraction; slime's and verl's "
         "DeepSeek-V3 scripts set 1)",
         base::in_range(0, 1)});
  s.add({keys::kTrainCpuOptimizerParamsPerS.name, KnobType::Double, TrainerSetup{}.cpu_optimizer_params_s, "params/s",
         "phases: parameters one GPU's process steps on the CPU per second under optimizer offload, copies overlapped "
         "(fitted on NVIDIA-NeMo/RL PR #3628: Qwen3-0.6B on one H100, 1.678 s a step offloaded against 0.752 s)",
         base::in_range(1e3, 1e13)});
  s.add({keys::kTrainHostMemoryGB.name, KnobType::Double, TrainerSetup{}.host_memory_bytes / 1e9, "GB",
         "phases: host memory of a trainer node, for the CPU-offloaded optimizer and colocated offload (DGX H100/H200: "
         "2 TB, NVIDIA's MLPerf system descriptions)",
         base::in_range(1, 1e6)});
  // cudaMemcpy of pinned memory reaches about 80% of PCIe's line rate
  // (NVIDIA CUDA samples' bandwidthTest on Gen5 x16: ~50 of 64 GB/s).
  s.add({keys::kTrainHostLinkEfficiency.name, KnobType::Double, 0.8, "", "phases: achieved fraction of the GPU-host link when offloading",
         base::in_range(0.01, 1)});
  s.add({keys::kTrainLinearBaseS.name, KnobType::Double, 0.0, "s", "linear train model: fixed cost per step",
         base::in_range(0, kMaxFixedCost_s)});
  s.add({keys::kTrainLinearPerTokUs.name, KnobType::Double, 0.0, "us", "linear train model: cost per trained token (prompt + response)",
         base::in_range(0, kMaxPerTokenCost_us)});
  s.add({keys::kTrainLinearPerPaddedTokUs.name, KnobType::Double, 0.0, "us",
         "linear train model: cost per token of the batch padded to its longest sample (samples x longest)",
         base::in_range(0, kMaxPerTokenCost_us)});
  s.add({keys::kTrainSlowdownBesideEngines.name, KnobType::Double, 1.0, "x",
         "disaggregated: a train step progresses this many times slower while an engine runs requests (shared host); "
         "1 = separate machines",
         base::in_range(1, 100)});
  s.add({keys::kTrainHandoffS.name, KnobType::Double, 0.0, "s",
         "disaggregated: wall time per train step outside its compute, not slowed by engines: handing the batch to the "
         "trainer and its end back (an RPC to a remote trainer; on a shared host, waking the trainer's idle CPU)",
         base::in_range(0, kMaxFixedCost_s)});
  // Fitted on training-throughput benchmarks (sim/fitted_defaults.hpp, `april components`).
  s.add({keys::kTrainMfu.name, KnobType::Double, 0.0, "",
         "trainer model FLOPs utilisation in the layers' matmuls; 0 = train.framework's profile (train.fsdp_mfu or "
         "train.megatron_mfu)",
         base::in_range(0, 1)});
  s.add({keys::kTrainFsdpMfu.name, KnobType::Double, fitted::kTrainFsdpMfu, "",
         "the fsdp profile's MFU in the layers' matmuls (PyTorch FSDP2: torchtitan's and NeMo AutoModel's benchmarks)",
         base::in_range(0.01, 1)});
  s.add({keys::kTrainMegatronMfu.name, KnobType::Double, fitted::kTrainMegatronMfu, "",
         "the megatron profile's MFU in the layers' matmuls (Megatron-Core with Transformer Engine: NeMo's and "
         "Megatron-Bridge's benchmarks)",
         base::in_range(0.01, 1)});
  s.add({keys::kTrainMicroBatchOverheadS.name, KnobType::Double, fitted::kTrainMicroBatchOverheadS, "s",
         "fixed cost of each micro-batch's forward on a GPU (twice that for its backward): launches, the framework's "
         "bookkeeping, small collectives",
         base::in_range(0, kMaxFixedCost_s)});
  s.add({keys::kTrainActivationPasses.name, KnobType::Double, -1.0, "",
         "times each forward moves every token's layer activations (hidden + MLP intermediate widths, bf16) through "
         "HBM outside the matmuls (norms, residual adds, rotary, the gated activation): memory-bound time beside the "
         "matmuls' FLOPs, so an accelerator with more HBM per FLOP reaches a higher fraction of its peak; -1 = "
         "train.framework's profile (train.fsdp_activation_passes or train.megatron_activation_passes)",
         base::in_range(-1, 1000)});
  s.add({keys::kTrainFsdpActivationPasses.name, KnobType::Double, fitted::kTrainFsdpActivationPasses, "",
         "the fsdp profile's activation passes per forward (eager elementwise kernels)", base::in_range(0, 1000)});
  s.add({keys::kTrainMegatronActivationPasses.name, KnobType::Double, fitted::kTrainMegatronActivationPasses, "",
         "the megatron profile's activation passes per forward (Transformer Engine fuses the norms, rotary and "
         "activations into the matmuls' neighbours)",
         base::in_range(0, 1000)});
  // verl's actor enables gradient checkpointing in its trainer config and
  // example scripts (actor_rollout_ref.model.enable_gradient_checkpointing
  // True), and slime's model scripts pass --recompute-granularity full.
  s.add({keys::kTrainFullRecompute.name,
         KnobType::Bool,
         true,
         "",
         "full activation recomputation: the backward runs each layer's forward again (4 forwards of FLOPs per update, not 3)",
         {}});
  s.add({keys::kTrainFixedS.name, KnobType::Double, 0.0, "s",
         "fixed cost per train step: phases: what they leave out (logging, data loading); flops: all but the "
         "forward and backward (2 s before model version 7)",
         base::in_range(0, kMaxFixedCost_s)});
  s.add({keys::kSyncTimeModel.name, KnobType::String, std::string("bandwidth"), "",
         "bandwidth (bytes / bandwidth + latency), fixed (sync.latency_s only, e.g. calibrated), zero, or an "
         "implementation: per_tensor (each checkpoint tensor broadcast and loaded alone: verl without its checkpoint "
         "engine), bucketed (tensors packed into sync.bucket_MB buckets: slime), checkpoint_engine (verl's: tensors "
         "dealt over the trainer's ranks, each packing buckets of sync.bucket_MB); these cost "
         "sync.per_transfer_ms per broadcast plus the whole weights to every engine GPU over the topology (or at "
         "sync.bandwidth_GB_s) plus sync.latency_s. cuda_ipc (colocated only: each bucket's tensors gathered whole on "
         "every GPU, then handed to the engine on that GPU: slime --colocate, verl's hybrid engine) costs "
         "sync.ipc_per_bucket_ms per bucket plus the gather plus the load; storage (a checkpoint written to a shared "
         "filesystem and read back by every engine GPU: slime's disk transport, SGLang update_weights_from_disk) "
         "costs the write at sync.storage_write_GB_s per trainer node plus the read at sync.storage_read_GB_s, each "
         "within sync.storage_aggregate_GB_s in all",
         [] {
           std::vector<std::string> names = {"bandwidth", "fixed", "zero"};
           for (const auto& m : sync_method_names()) names.push_back(m);
           return base::one_of(names);
         }()});
  s.add({keys::kSyncPerTransferMs.name, KnobType::Double, kFittedPerTransfer_ms, "ms",
         "implementations: the fixed cost of one broadcast (launch, the trainer's gather, the engine's load call); "
         "the default is fitted on verl's Qwen2.5-Math-7B 4:4 per-tensor sync (docs/published-runs.md)",
         base::in_range(0, kMaxFixedCost_s * 1e3)});
  s.add({keys::kSyncPerTransferMsPerNodeDoubling.name, KnobType::Double, kFittedPerTransferPerNodeDoubling_ms, "ms",
         "implementations: what one broadcast costs more each time the nodes it spans double (cost = sync.per_transfer_ms + "
         "this x log2(nodes)); 0 keeps it flat. The default is fitted on verl's Qwen3-30B-A3B 16:16 per-tensor sync, "
         "4 nodes (docs/published-runs.md)",
         base::in_range(0, kMaxFixedCost_s * 1e3)});
  s.add({keys::kSyncBucketMB.name, KnobType::Double, 512.0, "MiB",
         "bucketed, checkpoint_engine, cuda_ipc and storage (a file per bucket): the bucket size (slime's "
         "--update-weight-buffer-size default, 512 MiB; verl's checkpoint engine device_buffer_size_M default, 4096; "
         "verl's colocated update_weights_bucket_megabytes, 2048)",
         base::in_range(1e-3, 1e9)});
  // The slime weight-sync write-up (hebiao064.github.io/rl-weight-sync,
  // section 4.3): one SGLang update_weights_from_tensor call with a
  // flattened bucket, Qwen3-30B-A3B on H100: IPC open 3 ms + rebuild 5 ms +
  // load 12 ms + close 0.2 ms = 20 ms (41 ms unflattened).
  s.add({keys::kSyncIpcPerBucketMs.name, KnobType::Double, 20.0, "ms",
         "cuda_ipc: the fixed cost of one bucket: its handle serialised, sent and opened, its tensors rebuilt and loaded "
         "(slime's measured SGLang call with a flattened bucket: 20 ms)",
         base::in_range(0, kMaxFixedCost_s * 1e3)});
  // Laminar (arXiv 2510.12633, section 4.1): serialising one 4 GB shard of a
  // 32B model for a storage-based sync takes about 8 s.
  s.add({keys::kSyncStorageWriteGBs.name, KnobType::Double, 0.5, "GB/s",
         "storage: the checkpoint's write, per trainer node writing its share (Laminar: a 4 GB shard serialised in about 8 s)",
         base::in_range(kMinBandwidth_GB_s, kMaxBandwidth_GB_s)});
  // Run:ai Model Streamer benchmark (run-ai/runai-model-streamer
  // docs/src/benchmarks.md): Llama-3-8B safetensors from Weka to GPU at
  // 4.28 GiB/s (1.03 from AWS gp3, 3.51 from S3).
  s.add({keys::kSyncStorageReadGBs.name, KnobType::Double, 4.6, "GB/s",
         "storage: one engine GPU's read of the checkpoint (every tensor-parallel rank reads it all, in parallel, up to "
         "sync.storage_aggregate_GB_s in all). Run:ai's streamer from Weka: 4.28 GiB/s",
         base::in_range(kMinBandwidth_GB_s, kMaxBandwidth_GB_s)});
  // A shared filesystem serves every client from one pool of servers, so
  // its total, not each client's, bounds a sync of many engines: DeepSeek's
  // 3FS reads 6.6 TiB/s in all from 180 storage nodes (deepseek-ai/3FS
  // README), about 40 GB/s a node. 0 leaves it unbounded, as before the key.
  s.add({keys::kSyncStorageAggregateGBs.name, KnobType::Double, 0.0, "GB/s",
         "storage: the filesystem's aggregate bandwidth, shared by the trainer nodes' writes and then by every engine GPU's "
         "read (0: unbounded; DeepSeek's 3FS: 6.6 TiB/s from 180 storage nodes)",
         base::in_range(0, kMaxBandwidth_GB_s)});
  s.add({keys::kSyncRelayPullS.name, KnobType::Double, -1.0, "s",
         "relays (policy laminar): one engine's load of the published version from its host's relay; -1: its GPU's weights "
         "over the host link (PCIe) at train.host_link_efficiency",
         base::in_range(-1, kMaxFixedCost_s)});
  s.add({keys::kSyncBandwidthGBs.name, KnobType::Double, 100.0, "GB/s", "effective trainer-to-engine weight bandwidth",
         base::in_range(kMinBandwidth_GB_s, kMaxBandwidth_GB_s)});
  s.add({keys::kTopologyPreset.name, KnobType::String, std::string("none"), "",
         "weight-sync topology: none (use sync.bandwidth_GB_s); cluster (the scenario's own nodes: the accelerator's "
         "scale-up link inside a node, one NIC per GPU between nodes); or the fixed shapes single-node, two-nodes-ib, "
         "separate-racks (topology.*_GB_s)",
         [] {
           auto names = topology_presets();
           names.insert(names.begin() + 1, "cluster");
           return base::one_of(names);
         }()});
  s.add({keys::kTopologyFile.name,
         KnobType::String,
         std::string(""),
         "",
         "a topology JSON file (nodes, links, trainer, engines); overrides topology.preset",
         {}});
  s.add({keys::kTopologyNvlinkGBs.name, KnobType::Double, 450.0, "GB/s", "presets: GPU-to-NVSwitch bandwidth, one direction",
         base::in_range(kMinBandwidth_GB_s, kMaxBandwidth_GB_s)});
  s.add({keys::kTopologyNodeNetworkGBs.name, KnobType::Double, 400.0, "GB/s",
         "presets: a node's network bandwidth (8 x 400 Gb/s InfiniBand NICs)", base::in_range(kMinBandwidth_GB_s, kMaxBandwidth_GB_s)});
  s.add({keys::kTopologyRackLinkGBs.name, KnobType::Double, 12.5, "GB/s", "separate-racks: the inter-rack link (100 Gb/s)",
         base::in_range(kMinBandwidth_GB_s, kMaxBandwidth_GB_s)});
  s.add({keys::kSyncLatencyS.name, KnobType::Double, 1.0, "s", "fixed cost per weight sync (pause, update, resume)",
         base::in_range(0, kMaxFixedCost_s)});
}

double train_mfu(const base::Config& c) {
  if (c.get(sim::keys::kTrainMfu) > 0) return c.get(sim::keys::kTrainMfu);
  return c.get(sim::keys::kTrainFramework) == "fsdp" ? c.get(sim::keys::kTrainFsdpMfu) : c.get(sim::keys::kTrainMegatronMfu);
}

TrainerSetup trainer_setup(const base::Config& c) { return trainer_setup(c, ScenarioInputs(c)); }

TrainerSetup trainer_setup(const base::Config& c, const ScenarioInputs& in) {
  TrainerSetup s;
  const auto shape = cluster_shape(c, in);
  s.framework = c.get(sim::keys::kTrainFramework) == "fsdp" ? TrainFramework::Fsdp : TrainFramework::Megatron;
  s.gpus = shape.train_gpus;
  if (s.framework == TrainFramework::Megatron) {
    s.tensor_parallel = c.get(sim::keys::kTrainTensorParallel);
    s.pipeline_parallel = c.get(sim::keys::kTrainPipelineParallel);
  } else {
    s.fsdp_shard_gpus = c.get(sim::keys::kTrainFsdpShardGpus);
  }
  s.context_parallel = c.get(sim::keys::kTrainContextParallel);
  s.expert_parallel = c.get(sim::keys::kTrainExpertParallel);
  s.mfu = train_mfu(c);
  s.micro_batch_overhead_s = c.get(sim::keys::kTrainMicroBatchOverheadS);
  s.full_recompute = c.get(sim::keys::kTrainFullRecompute);
  s.activation_passes = c.get(sim::keys::kTrainActivationPasses) >= 0 ? c.get(sim::keys::kTrainActivationPasses)
                        : s.framework == TrainFramework::Megatron     ? c.get(sim::keys::kTrainMegatronActivationPasses)
                                                                      : c.get(sim::keys::kTrainFsdpActivationPasses);
  s.ppo_mini_batches = c.get(sim::keys::kTrainPpoMiniBatches);
  s.ppo_epochs = c.get(sim::keys::kTrainPpoEpochs);
  s.old_logprob = c.get(sim::keys::kTrainOldLogprob);
  s.ref_logprob = c.get(sim::keys::kTrainRefLogprob);
  s.micro_batch_tok = c.get(sim::keys::kTrainMicroBatchTok);
  s.offload = c.get(sim::keys::kTrainOffload) && !shape.disaggregated();
  s.host_link_efficiency = c.get(sim::keys::kTrainHostLinkEfficiency);
  s.optimizer_offload_fraction = c.get(sim::keys::kTrainOptimizerOffloadFraction);
  s.cpu_optimizer_params_s = c.get(sim::keys::kTrainCpuOptimizerParamsPerS);
  s.host_memory_bytes = c.get(sim::keys::kTrainHostMemoryGB) * 1e9;
  s.hbm_efficiency = c.get(sim::keys::kEngineHbmEfficiency);
  s.link_efficiency = c.get(sim::keys::kEngineLinkEfficiency);
  s.fixed_s = c.get(sim::keys::kTrainFixedS);
  s.balance = c.get(sim::keys::kTrainBalance) == "verl" ? DpBalance::Verl : DpBalance::Even;
  s.update_calls = c.get(sim::keys::kTrainUpdateCalls);
  return s;
}

TrainTimeModel train_time_model(const base::Config& c) { return train_time_model(c, ScenarioInputs(c)); }

TrainTimeModel train_time_model(const base::Config& c, const ScenarioInputs& in) {
  if (c.get(sim::keys::kTrainTimeModel) == "linear") {
    const double base = c.get(sim::keys::kTrainLinearBaseS), per = c.get(sim::keys::kTrainLinearPerTokUs) * 1e-6;
    const double padded = c.get(sim::keys::kTrainLinearPerPaddedTokUs) * 1e-6;
    return [base, per, padded](const TrainBatchShape& b) {
      TrainPhaseTimes t;
      t.other_s = base + per * static_cast<double>(b.tokens) + padded * static_cast<double>(b.samples * b.longest_tok);
      return t;
    };
  }
  if (c.get(sim::keys::kTrainTimeModel) == "flops") {
    const auto hw = trainer_accelerator(c, in);
    const auto& model = in.model();
    TrainCostParams tp{train_mfu(c), cluster_shape(c, in).train_gpus, c.get(sim::keys::kTrainFixedS)};
    return [model, hw, tp](const TrainBatchShape& b) {
      TrainPhaseTimes t;
      t.other_s = train_time_s(model, hw, tp, b.tokens);
      return t;
    };
  }
  if (c.get(sim::keys::kTrainTimeModel) == "phases") {
    const auto hw = trainer_accelerator(c, in);
    const auto& model = in.model();
    auto setup = trainer_setup(c, in);
    check_trainer_setup(setup, model, hw);
    // Offload is colocated only, where the engines' GPUs are the trainer's.
    if (setup.offload) setup.engine_weights_per_gpu_bytes = engine_memory(model, hw, engine_layout(c)).weights_per_gpu_bytes;
    return [model, hw, setup](const TrainBatchShape& b) { return train_phase_times(model, hw, setup, b); };
  }
  return {};
}

std::optional<Topology> scenario_topology(const base::Config& c, const ScenarioInputs& in) {
  if (!c.get(sim::keys::kTopologyFile).empty()) return read_topology_file(c.get(sim::keys::kTopologyFile));
  const auto& preset = c.get(sim::keys::kTopologyPreset);
  if (preset == "none") return std::nullopt;
  if (preset == "cluster") return cluster_topology(cluster_shape(c, in), in.engine_hw(), trainer_accelerator(c, in));
  return preset_topology(preset, cluster_shape(c, in).engines, c.get(sim::keys::kClusterTensorParallel),
                         c.get(sim::keys::kTopologyNvlinkGBs) * 1e9, c.get(sim::keys::kTopologyNodeNetworkGBs) * 1e9,
                         c.get(sim::keys::kTopologyRackLinkGBs) * 1e9);
}

namespace {

// The tree broadcast over the scenario's topology, once its engines are
// checked against the cluster's.
SyncPlan checked_plan(const base::Config& c, const ScenarioInputs& in, const Topology& topo, double weight_bytes, SyncPayload payload) {
  if (const auto engines = cluster_shape(c, in).engines; static_cast<std::int64_t>(topo.engines.size()) != engines) {
    throw base::ConfigError(
        fmt::format("topology: {} engines, but the cluster has {} ({})", topo.engines.size(), engines, describe(cluster_shape(c, in))));
  }
  // Each engine's GPUs hold its tensor-parallel shards: a topology engine of
  // another size would plan the wrong bytes.
  const auto tp = c.get(sim::keys::kClusterTensorParallel);
  for (std::size_t e = 0; e < topo.engines.size(); ++e) {
    if (static_cast<std::int64_t>(topo.engines[e].size()) != tp) {
      throw base::ConfigError(fmt::format("topology: engine {} has {} GPU{}, but cluster.tensor_parallel is {}", e, topo.engines[e].size(),
                                          topo.engines[e].size() == 1 ? "" : "s", tp));
    }
  }
  try {
    return plan_weight_sync(topo, weight_bytes, payload);
  } catch (const std::invalid_argument& e) {
    throw base::ConfigError(e.what());
  }
}

// An implementation's sync: its transfers at sync.per_transfer_ms each, the
// whole weights to every engine GPU (each broadcast carries full tensors; a
// rank keeps its shard), and sync.latency_s.
WeightSync implemented_sync(const base::Config& c, const ScenarioInputs& in, SyncMethod method, const std::optional<Topology>& topo) {
  const ModelArch& model = in.model();
  if (method == SyncMethod::CudaIpc || method == SyncMethod::Storage) return sync_over_own_path(c, method, in);
  WeightSync w;
  w.bytes = model.weight_bytes(DType::BF16);
  std::vector<double> tensor_bytes;
  for (const auto elements : checkpoint_tensor_elements(model)) {
    tensor_bytes.push_back(static_cast<double>(elements) * bytes_per_element(DType::BF16));
  }
  const auto shape = cluster_shape(c, in);
  std::int64_t transfers = 0;
  try {
    transfers = sync_transfers(method, tensor_bytes, c.get(sim::keys::kSyncBucketMB) * 1024.0 * 1024.0,
                               shape.disaggregated() ? shape.train_gpus : shape.gpus);
  } catch (const std::invalid_argument& e) {
    throw base::ConfigError(e.what());
  }
  // A broadcast spans every node of the cluster (the trainer's and the
  // engines'); its fixed cost grows with their count (verl's rows: 0.25,
  // 0.77, 1.33 ms per tensor on 1, 4 and 16 nodes).
  const double per_transfer_ms = c.get(sim::keys::kSyncPerTransferMs) +
                                 c.get(sim::keys::kSyncPerTransferMsPerNodeDoubling) * std::log2(static_cast<double>(shape.nodes));
  const double per_transfer_s = per_transfer_ms / 1e3;
  double path_s = 0;
  std::string path;
  if (topo) {
    const auto plan = checked_plan(c, in, *topo, w.bytes, SyncPayload::FullWeights);
    path_s = plan.time_s;
    path = fmt::format("the topology's busiest link ({})", plan.bottleneck.empty() ? "none" : plan.bottleneck);
  } else {
    path_s = w.bytes / (c.get(sim::keys::kSyncBandwidthGBs) * 1e9);
    path = fmt::format("{} GB/s", c.get(sim::keys::kSyncBandwidthGBs));
  }
  const double transfers_s = static_cast<double>(transfers) * per_transfer_s;
  w.time_s = c.get(sim::keys::kSyncLatencyS) + transfers_s + path_s;
  w.how =
      fmt::format("{}: {} transfers x {} ms = {:.3f} s, {:.2f} GB to every engine GPU over {} = {:.3f} s, + {} s", sync_method_name(method),
                  transfers, per_transfer_ms, transfers_s, w.bytes / 1e9, path, path_s, c.get(sim::keys::kSyncLatencyS));
  return w;
}

}  // namespace

Accelerator trainer_accelerator(const base::Config& c) { return trainer_accelerator(c, ScenarioInputs(c)); }

Accelerator trainer_accelerator(const base::Config& c, const ScenarioInputs& in) {
  const auto& engines = in.engine_hw();
  const auto& name = c.get(sim::keys::kTrainHardware);
  if (name.empty() || name == c.get(sim::keys::kHardware)) return engines;
  if (c.get(sim::keys::kClusterMode) != "disaggregated") {
    throw base::ConfigError(
        fmt::format("train.hardware is {}, but cluster.mode is colocated, where the engines' GPUs ({}) are the "
                    "trainer's; set cluster.mode=disaggregated or leave train.hardware empty",
                    name, c.get(sim::keys::kHardware)));
  }
  const auto& trainer = in.named_trainer_hw();
  // A node holds one kind of accelerator: pools on two kinds take whole nodes,
  // counted in the engines' node size.
  const auto shape = cluster_shape(c, in);
  if (shape.nodes > 1 && (shape.per_node_split || shape.train_gpus % shape.gpus_per_node != 0)) {
    throw base::ConfigError(
        fmt::format("train.hardware {} differs from hardware {}, so the trainer's pool must be whole nodes of {} "
                    "(cluster.train_gpus is {}{})",
                    trainer.name, engines.name, shape.gpus_per_node, shape.train_gpus,
                    shape.per_node_split ? ", and cluster.split_placement per_node shares every node" : ""));
  }
  if (trainer.gpus_per_node != engines.gpus_per_node) {
    throw base::ConfigError(
        fmt::format("train.hardware {} has {} GPUs per node and hardware {} has {}; the pools are counted in "
                    "whole nodes of one size",
                    trainer.name, trainer.gpus_per_node, engines.name, engines.gpus_per_node));
  }
  return trainer;
}

std::string describe_hardware(const base::Config& c) {
  const auto& engines = c.get(sim::keys::kHardware);
  const auto& trainer = c.get(sim::keys::kTrainHardware);
  return trainer.empty() || trainer == engines ? engines : fmt::format("{} (trainer {})", engines, trainer);
}

WeightSync weight_sync(const base::Config& c) { return weight_sync(c, ScenarioInputs(c)); }

WeightSync weight_sync(const base::Config& c, const ScenarioInputs& in) {
  WeightSync w;
  if (c.get(sim::keys::kSyncTimeModel) == "zero") {
    w.how = "zero";
    return w;
  }
  if (c.get(sim::keys::kSyncTimeModel) == "fixed") {
    w.time_s = c.get(sim::keys::kSyncLatencyS);
    w.how = fmt::format("fixed {} s", w.time_s);
    return w;
  }
  const auto& model = in.model();
  const auto topo = scenario_topology(c, in);
  if (const auto method = sync_method_named(c.get(sim::keys::kSyncTimeModel))) return implemented_sync(c, in, *method, topo);
  w.bytes = model.weight_bytes(DType::BF16);
  if (!topo) {
    w.time_s = sync_time_s(model, {c.get(sim::keys::kSyncBandwidthGBs) * 1e9, c.get(sim::keys::kSyncLatencyS)});
    w.how = fmt::format("{:.2f} GB at {} GB/s + {} s", model.weight_bytes(DType::BF16) / 1e9, c.get(sim::keys::kSyncBandwidthGBs),
                        c.get(sim::keys::kSyncLatencyS));
    return w;
  }
  const auto plan = checked_plan(c, in, *topo, w.bytes, SyncPayload::TpShards);
  w.time_s = c.get(sim::keys::kSyncLatencyS) + plan.time_s;
  w.how = fmt::format("tree broadcast over the topology: {:.3f} s on the busiest link ({}) + {} s", plan.time_s,
                      plan.bottleneck.empty() ? "none" : plan.bottleneck, c.get(sim::keys::kSyncLatencyS));
  return w;
}

}  // namespace april::sim
