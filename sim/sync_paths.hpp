#pragma once
// The weight syncs that do not broadcast over the cluster: CUDA IPC between
// processes sharing a GPU (colocated) and a checkpoint through a shared
// filesystem. Each pays its own path, not the topology's broadcast.
#include "base/config.hpp"
#include "sim/model_arch.hpp"
#include "sim/sync_methods.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::sim {

class ScenarioInputs;

// One sync of the model's bf16 weights by `method` (CudaIpc or Storage) on the
// scenario's cluster, plus sync.latency_s. Throws base::ConfigError for
// cuda_ipc on a disaggregated cluster (its engines hold no trainer memory).
WeightSync sync_over_own_path(const base::Config& config, SyncMethod method, const ScenarioInputs& inputs);

// The weights handed to engines on the trainer's own GPUs through CUDA IPC
// (slime --colocate's path, below): sync.bucket_MB buckets at
// sync.ipc_per_bucket_ms each, the weights gathered whole on every GPU (over
// its NIC `across_nodes`, else the scale-up link), each engine GPU's shard
// loaded at HBM speed; plus `latency_s`.
WeightSync ipc_weight_load(const base::Config& config, const ModelArch& model, const Accelerator& hw, bool across_nodes,
                           std::int64_t engine_tensor_parallel, double latency_s);

// Laminar's pull (arXiv 2510.12633, section 4.2): an engine loads the
// weights its GPUs hold from the relay in its host's memory, over the host
// link (PCIe) at train.host_link_efficiency, all its GPUs at once; or
// sync.relay_pull_s where that is set (>= 0).
double relay_pull_time_s(const base::Config& config, const ScenarioInputs& inputs);

}  // namespace april::sim
