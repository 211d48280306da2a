#pragma once
// The cluster itself as a weight-sync topology (topology.preset=cluster):
// its nodes of the accelerator's GPUs joined by the scale-up switch (NVLink /
// NVSwitch, Infinity Fabric), each GPU with its own NIC to the network
// (rail-optimised, as DGX / HGX SuperPODs are cabled). The trainer's first
// GPU holds the updated weights; the engines' GPUs follow the trainer's in
// disaggregated mode and share them when colocated.
#include "sim/cluster_shape.hpp"
#include "sim/hardware.hpp"
#include "sim/topology.hpp"

namespace april::sim {

// `train_hw` is the trainer's accelerator (its nodes' scale-up link and NICs
// on a disaggregated cluster of two kinds); `hw` everyone else's.
Topology cluster_topology(const ClusterShape& shape, const Accelerator& hw, const Accelerator& train_hw);

}  // namespace april::sim
