#pragma once
// Weight sync as RL frameworks implement it. A sync moves the weights over a
// path and pays a fixed cost per transfer: one collective launch, the
// trainer's gather of that tensor or bucket from its shards, and the engine's
// load call. How many transfers a sync makes is what sets implementations of
// the same bytes apart (10-200x in public threads, per-tensor updates against
// 512 MB buckets, for MoE models of tens of thousands of tensors).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace april::sim {

enum class SyncMethod {
  // Every tensor broadcast alone from the trainer's first rank to all the
  // trainer's and engines' ranks, then loaded: verl's fully-async
  // ParameterSynchronizer without its checkpoint engine (base_detach_sync.py,
  // _sync_vllm_weights: one collective.broadcast per entry of weights_info).
  PerTensor,
  // Tensors packed in checkpoint order into buckets of sync.bucket_MB, a bucket
  // closed when the next tensor would overflow it, each bucket one broadcast
  // and one load: slime's --update-weight-buffer-size (512 MiB by default,
  // slime/utils/arguments.py), verl's SGLang path.
  Bucketed,
  // verl's checkpoint engine (verl/experimental/fully_async_policy/
  // checkpoint_engine.py, register_checkpoint): tensor i is held by trainer rank
  // i mod ranks, each rank packs its tensors into buckets of
  // max(device_buffer_size_M, the largest tensor), 256-byte aligned, and every
  // bucket is one broadcast from pinned host memory.
  CheckpointEngine,
  // Colocated only: the trainer hands each bucket of sync.bucket_MB to the
  // engine on its own GPU as a CUDA IPC handle, no weight bytes crossing
  // to another process's memory by copy: slime's --colocate path
  // (update_weight_from_tensor.py: the bucket's tensors gathered whole on
  // every rank, flattened into one tensor, its handle sent in one
  // update_weights_from_tensor call per engine), verl's hybrid engine
  // (one IPC buffer of update_weights_bucket_megabytes). Each bucket costs
  // sync.ipc_per_bucket_ms.
  CudaIpc,
  // Through a shared filesystem: the trainer writes a checkpoint (one file per
  // bucket, one writer per node: slime's --update-weight-transport disk,
  // hf_checkpoint_saver.py) and every engine rank reads it back
  // (SGLang's update_weights_from_disk: each tensor-parallel rank iterates the
  // checkpoint's files). No per-transfer cost: the bytes dominate.
  Storage,
};

// The method a sync.time_model value names; nullopt for bandwidth, fixed, zero.
std::optional<SyncMethod> sync_method_named(const std::string& time_model);
const char* sync_method_name(SyncMethod m);
// The sync.time_model values that name a method, in declaration order.
std::vector<std::string> sync_method_names();

// Transfers one sync of these tensors (bytes each, checkpoint order) makes:
// tensors, buckets, or (Storage) checkpoint files. bucket_bytes applies to
// every method but PerTensor; trainer_ranks to
// CheckpointEngine. Throws std::invalid_argument on a non-positive bucket or
// rank count.
std::int64_t sync_transfers(SyncMethod m, const std::vector<double>& tensor_bytes, double bucket_bytes, std::int64_t trainer_ranks);

}  // namespace april::sim
