#pragma once
// The train, weight-sync and topology scenario keys, declared beside the code
// that reads them: a scenario's train-time model and weight-sync time.
#include <functional>
#include <optional>
#include <string>

#include "base/config.hpp"
#include "sim/cost_model.hpp"
#include "sim/hardware.hpp"
#include "sim/topology.hpp"

namespace april::sim {

class ScenarioInputs;

void declare_train_sync_knobs(base::ConfigSchema& schema);

// The phases of one train step on a batch of that shape (one phase, other_s,
// for the flops and linear models); empty for train.time_model=zero.
// `inputs`: the model and accelerators (sim/scenario_inputs.hpp); each
// function without them resolves the scenario's own (tools outside a run).
using TrainTimeModel = std::function<TrainPhaseTimes(const TrainBatchShape&)>;
TrainTimeModel train_time_model(const base::Config& config, const ScenarioInputs& inputs);
TrainTimeModel train_time_model(const base::Config& config);
// The trainer's layout and PPO settings (train.*) on the scenario's GPUs.
TrainerSetup trainer_setup(const base::Config& config, const ScenarioInputs& inputs);
TrainerSetup trainer_setup(const base::Config& config);
// The trainer's matmul MFU: train.mfu, or with it at 0 its framework's profile.
double train_mfu(const base::Config& config);
// The trainer's accelerator: train.hardware on a disaggregated cluster (a
// heterogeneous one: e.g. H20 engines, an H800 trainer), else `hardware`.
// Throws base::ConfigError for train.hardware on a colocated cluster or with
// another node size.
Accelerator trainer_accelerator(const base::Config& config, const ScenarioInputs& inputs);
Accelerator trainer_accelerator(const base::Config& config);
// The scenario's accelerators for a header line: "h20", or "h20 (trainer h800)".
std::string describe_hardware(const base::Config& config);

// Weight-sync time per step: from the topology when one is given (preset or
// file), else weight bytes over sync.bandwidth_GB_s; plus sync.latency_s. An
// implementation (sync.time_model per_tensor, bucketed, checkpoint_engine) adds
// sync.per_transfer_ms per transfer and sends the whole weights to every GPU;
// cuda_ipc and storage have their own paths (sim/sync_paths.hpp).
struct WeightSync {
  double time_s = 0;
  double bytes = 0;  // the weights pushed (bf16); 0 where the time is given, not modelled
  std::string how;
};
WeightSync weight_sync(const base::Config& config, const ScenarioInputs& inputs);
WeightSync weight_sync(const base::Config& config);
std::optional<Topology> scenario_topology(const base::Config& config, const ScenarioInputs& inputs);

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::DoubleKey kSyncBandwidthGBs{"sync.bandwidth_GB_s"};
inline constexpr base::DoubleKey kSyncBucketMB{"sync.bucket_MB"};
inline constexpr base::DoubleKey kSyncIpcPerBucketMs{"sync.ipc_per_bucket_ms"};
inline constexpr base::DoubleKey kSyncStorageReadGBs{"sync.storage_read_GB_s"};
inline constexpr base::DoubleKey kSyncStorageWriteGBs{"sync.storage_write_GB_s"};
inline constexpr base::DoubleKey kSyncStorageAggregateGBs{"sync.storage_aggregate_GB_s"};
inline constexpr base::DoubleKey kSyncLatencyS{"sync.latency_s"};
inline constexpr base::DoubleKey kSyncPerTransferMs{"sync.per_transfer_ms"};
inline constexpr base::DoubleKey kSyncRelayPullS{"sync.relay_pull_s"};
inline constexpr base::DoubleKey kSyncPerTransferMsPerNodeDoubling{"sync.per_transfer_ms_per_node_doubling"};
inline constexpr base::StringKey kSyncTimeModel{"sync.time_model"};
inline constexpr base::StringKey kTopologyFile{"topology.file"};
inline constexpr base::DoubleKey kTopologyNodeNetworkGBs{"topology.node_network_GB_s"};
inline constexpr base::DoubleKey kTopologyNvlinkGBs{"topology.nvlink_GB_s"};
inline constexpr base::DoubleKey kTopologyRackLinkGBs{"topology.rack_link_GB_s"};
inline constexpr base::StringKey kTopologyPreset{"topology.preset"};
inline constexpr base::StringKey kTrainBalance{"train.balance"};
inline constexpr base::IntKey kTrainContextParallel{"train.context_parallel"};
inline constexpr base::IntKey kTrainExpertParallel{"train.expert_parallel"};
inline constexpr base::DoubleKey kTrainFixedS{"train.fixed_s"};
inline constexpr base::StringKey kTrainFramework{"train.framework"};
inline constexpr base::IntKey kTrainFsdpShardGpus{"train.fsdp_shard_gpus"};
inline constexpr base::StringKey kTrainHardware{"train.hardware"};
inline constexpr base::DoubleKey kTrainHandoffS{"train.handoff_s"};
inline constexpr base::DoubleKey kTrainHostLinkEfficiency{"train.host_link_efficiency"};
inline constexpr base::DoubleKey kTrainHostMemoryGB{"train.host_memory_GB"};
inline constexpr base::DoubleKey kTrainCpuOptimizerParamsPerS{"train.cpu_optimizer_params_per_s"};
inline constexpr base::DoubleKey kTrainLinearBaseS{"train.linear_base_s"};
inline constexpr base::DoubleKey kTrainLinearPerPaddedTokUs{"train.linear_per_padded_tok_us"};
inline constexpr base::DoubleKey kTrainLinearPerTokUs{"train.linear_per_tok_us"};
inline constexpr base::DoubleKey kTrainMfu{"train.mfu"};
inline constexpr base::DoubleKey kTrainFsdpMfu{"train.fsdp_mfu"};
inline constexpr base::DoubleKey kTrainMegatronMfu{"train.megatron_mfu"};
inline constexpr base::IntKey kTrainMicroBatchTok{"train.micro_batch_tok"};
inline constexpr base::DoubleKey kTrainMicroBatchOverheadS{"train.micro_batch_overhead_s"};
inline constexpr base::DoubleKey kTrainActivationPasses{"train.activation_passes"};
inline constexpr base::DoubleKey kTrainFsdpActivationPasses{"train.fsdp_activation_passes"};
inline constexpr base::DoubleKey kTrainMegatronActivationPasses{"train.megatron_activation_passes"};
inline constexpr base::BoolKey kTrainFullRecompute{"train.full_recompute"};
inline constexpr base::BoolKey kTrainOffload{"train.offload"};
inline constexpr base::DoubleKey kTrainOptimizerOffloadFraction{"train.optimizer_offload_fraction"};
inline constexpr base::BoolKey kTrainFusedLogits{"train.fused_logits"};
inline constexpr base::BoolKey kTrainOldLogprob{"train.old_logprob"};
inline constexpr base::IntKey kTrainPipelineParallel{"train.pipeline_parallel"};
inline constexpr base::IntKey kTrainPpoEpochs{"train.ppo_epochs"};
inline constexpr base::IntKey kTrainPpoMiniBatches{"train.ppo_mini_batches"};
inline constexpr base::BoolKey kTrainRefLogprob{"train.ref_logprob"};
inline constexpr base::DoubleKey kTrainSlowdownBesideEngines{"train.slowdown_beside_engines"};
inline constexpr base::IntKey kTrainTensorParallel{"train.tensor_parallel"};
inline constexpr base::IntKey kTrainUpdateCalls{"train.update_calls"};
inline constexpr base::StringKey kTrainTimeModel{"train.time_model"};
}  // namespace keys

}  // namespace april::sim
