#include "sim/sync_paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/checkpoint_tensors.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/engine_memory.hpp"
#include "sim/hardware.hpp"
#include "sim/scenario_inputs.hpp"

namespace april::sim {

namespace {

std::int64_t buckets_of(const base::Config& c, SyncMethod method, const ModelArch& model) {
  std::vector<double> tensor_bytes;
  for (const auto elements : checkpoint_tensor_elements(model)) {
    tensor_bytes.push_back(static_cast<double>(elements) * bytes_per_element(DType::BF16));
  }
  try {
    return sync_transfers(method, tensor_bytes, c.get(keys::kSyncBucketMB) * 1024.0 * 1024.0, 1);
  } catch (const std::invalid_argument& e) {
    throw base::ConfigError(e.what());
  }
}

// slime --colocate (update_weight_from_tensor.py): for each bucket every rank
// gathers the bucket's tensors whole (pipeline and expert broadcasts, the
// tensor-parallel all-gather), flattens them and hands the engine on its own
// GPU one IPC handle; the engine loads its shard. Over a sync every GPU so
// receives the weights it does not hold: about all of them, over NVLink in
// one node and over its NIC when the trainer spans nodes. The pinned-host
// backup slime copies from (one shard per GPU) is not counted.
WeightSync cuda_ipc_sync(const base::Config& c, const ModelArch& model, const ClusterShape& shape, const Accelerator& hw) {
  if (shape.disaggregated()) {
    throw base::ConfigError(
        "sync.time_model=cuda_ipc needs cluster.mode=colocated: a CUDA IPC handle opens another process's memory on the "
        "same GPU, and a disaggregated cluster's engines hold none of the trainer's (a policy that "
        "overlaps rollout and training, one_step_off or async, runs on one): use bucketed, checkpoint_engine or storage, "
        "or only colocated policies (april simulate --policy sync,april,sorted)");
  }
  WeightSync w = ipc_weight_load(c, model, hw, shape.nodes > 1, shape.tensor_parallel, c.get(keys::kSyncLatencyS));
  w.how += fmt::format(", + {} s", c.get(keys::kSyncLatencyS));
  return w;
}

// slime's disk transport (hf_checkpoint_saver.py): one writer per trainer
// node, each writing its share of the files; then every engine GPU reads the
// whole checkpoint (SGLang's update_weights_from_disk iterates every file on
// each tensor-parallel rank) and loads its shard.
WeightSync storage_sync(const base::Config& c, const ModelArch& model, const ClusterShape& shape, const Accelerator& hw) {
  WeightSync w;
  w.bytes = model.weight_bytes(DType::BF16);
  const auto files = buckets_of(c, SyncMethod::Storage, model);
  const std::int64_t writer_nodes =
      shape.disaggregated() ? (shape.train_gpus + shape.gpus_per_node - 1) / shape.gpus_per_node : shape.nodes;
  double write_s = w.bytes / (c.get(keys::kSyncStorageWriteGBs) * 1e9 * static_cast<double>(writer_nodes));
  double read_s = w.bytes / (c.get(keys::kSyncStorageReadGBs) * 1e9);
  const double load_s = w.bytes / static_cast<double>(shape.tensor_parallel) / hw.hbm_bytes_s;
  // The filesystem's total: the writers share it, and so do the readers,
  // each engine GPU reading the whole checkpoint.
  const double aggregate_GB_s = c.get(keys::kSyncStorageAggregateGBs);
  std::string write_bound, read_bound;
  if (aggregate_GB_s > 0) {
    const std::int64_t readers = shape.engines * shape.tensor_parallel;
    const double write_floor_s = w.bytes / (aggregate_GB_s * 1e9);
    const double read_floor_s = static_cast<double>(readers) * w.bytes / (aggregate_GB_s * 1e9);
    if (write_floor_s > write_s) write_bound = fmt::format(", all within the filesystem's {} GB/s", aggregate_GB_s);
    if (read_floor_s > read_s) {
      read_bound = fmt::format(", {} GPU{} within the filesystem's {} GB/s", readers, readers == 1 ? "" : "s", aggregate_GB_s);
    }
    write_s = std::max(write_s, write_floor_s);
    read_s = std::max(read_s, read_floor_s);
  }
  w.time_s = c.get(keys::kSyncLatencyS) + write_s + read_s + load_s;
  w.how = fmt::format(
      "storage: {:.2f} GB in {} files written by {} trainer node{} at {} GB/s each{} = {:.3f} s, read by every engine GPU at {} "
      "GB/s{} = {:.3f} s, its shard loaded = {:.3f} s, + {} s",
      w.bytes / 1e9, files, writer_nodes, writer_nodes == 1 ? "" : "s", c.get(keys::kSyncStorageWriteGBs), write_bound, write_s,
      c.get(keys::kSyncStorageReadGBs), read_bound, read_s, load_s, c.get(keys::kSyncLatencyS));
  return w;
}

}  // namespace

WeightSync ipc_weight_load(const base::Config& c, const ModelArch& model, const Accelerator& hw, bool across_nodes,
                           std::int64_t engine_tensor_parallel, double latency_s) {
  WeightSync w;
  w.bytes = model.weight_bytes(DType::BF16);
  const auto buckets = buckets_of(c, SyncMethod::CudaIpc, model);
  const double buckets_s = static_cast<double>(buckets) * c.get(keys::kSyncIpcPerBucketMs) / 1e3;
  const double link_bytes_s = across_nodes ? hw.nic_bytes_s : hw.scale_up_bytes_s;
  const double gather_s = w.bytes / link_bytes_s;
  const double load_s = w.bytes / static_cast<double>(engine_tensor_parallel) / hw.hbm_bytes_s;
  w.time_s = latency_s + buckets_s + gather_s + load_s;
  w.how = fmt::format(
      "cuda_ipc: {} buckets x {} ms = {:.3f} s, {:.2f} GB gathered whole on every GPU over {} ({:.0f} GB/s) = {:.3f} s, each "
      "engine GPU's shard loaded at {:.0f} GB/s = {:.3f} s",
      buckets, c.get(keys::kSyncIpcPerBucketMs), buckets_s, w.bytes / 1e9, across_nodes ? "its NIC" : "the scale-up link",
      link_bytes_s / 1e9, gather_s, hw.hbm_bytes_s / 1e9, load_s);
  return w;
}

double relay_pull_time_s(const base::Config& c, const ScenarioInputs& in) {
  if (c.get(keys::kSyncRelayPullS) >= 0) return c.get(keys::kSyncRelayPullS);
  const auto& hw = in.engine_hw();
  const auto& model = in.model();
  const double per_gpu_bytes = engine_memory(model, hw, engine_layout(c)).weights_per_gpu_bytes;
  return per_gpu_bytes / (hw.host_link_bytes_s * c.get(keys::kTrainHostLinkEfficiency));
}

WeightSync sync_over_own_path(const base::Config& c, SyncMethod method, const ScenarioInputs& in) {
  const auto shape = cluster_shape(c, in);
  const auto& hw = in.engine_hw();
  const auto& model = in.model();
  if (method == SyncMethod::CudaIpc) return cuda_ipc_sync(c, model, shape, hw);
  if (method == SyncMethod::Storage) return storage_sync(c, model, shape, hw);
  throw std::logic_error("sync_over_own_path: a broadcast method");
}

}  // namespace april::sim
