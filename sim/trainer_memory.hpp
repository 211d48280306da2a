#pragma once
// The trainer's model states on each GPU during an update: weights,
// gradients and Adam's states, sharded as the framework shards them. A lower
// bound of what a trainer GPU holds (activations, buffers and fragmentation
// come on top), so a layout over it cannot train, whatever the batch.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/hardware.hpp"
#include "sim/model_arch.hpp"
#include "sim/train_phases.hpp"
#include "sim/trainer_activations.hpp"

namespace april::sim {

struct TrainerStateBytes {
  double per_gpu = 0;  // the busiest GPU's model states
  std::string how;     // the arithmetic, for an error or a report
};

// FSDP (ZeRO-3 over the shard group): 16 B per parameter in all (fp32 weights
// and gradients, Adam's two fp32 moments: ZeRO, Rajbhandari et al. 2020,
// section 3.1, counts 2 + 2 + 12 for mixed precision) over fsdp_shard() GPUs.
// Megatron: each GPU holds its TP x PP share of the dense weights and its
// EP x PP share of the experts as bf16 weights (2 B) and fp32 gradient buffers
// (4 B, gradients accumulated in fp32 as slime's scripts set), and the
// distributed optimizer's fp32 master weights and moments (12 B) of that share
// over the data-parallel ranks; the fraction Megatron offloads to the CPU
// (train.optimizer_offload_fraction) leaves only the 6 B.
TrainerStateBytes trainer_state_bytes(const ModelArch& model, const TrainerSetup& setup);

// Host memory one trainer node holds: Megatron's CPU-offloaded optimizer
// (16 B per offloaded parameter: fp32 master, gradient and two moments, all
// pinned; hybrid_optimizer.py) and, colocated with offload on, the state each
// GPU parks there between updates.
struct TrainerHostBytes {
  double per_node = 0;
  std::int64_t gpus_per_node = 0;
  std::string how;
};
TrainerHostBytes trainer_host_bytes(const ModelArch& model, const TrainerSetup& setup, const Accelerator& hw);

// Why the trainer cannot hold its model states on `hw`'s GPUs, or those and
// its activations' lower bound (sim/trainer_activations.hpp), or its
// offloaded state in a node's host memory, or nothing.
std::optional<std::string> trainer_memory_shortfall(const ModelArch& model, const TrainerSetup& setup, const Accelerator& hw,
                                                    const ActivationInputs& activations);

}  // namespace april::sim
