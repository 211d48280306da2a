#include "sim/cluster_topology.hpp"

#include <fmt/format.h>

namespace april::sim {

Topology cluster_topology(const ClusterShape& shape, const Accelerator& hw, const Accelerator& train_hw) {
  Topology t;
  t.nodes.push_back("network");
  t.kinds.push_back(NodeKind::Switch);
  std::vector<std::string> gpus;
  for (std::int64_t n = 0; n < shape.nodes; ++n) {
    const std::string sw = fmt::format("node{}-scaleup", n);
    t.nodes.push_back(sw);
    t.kinds.push_back(NodeKind::Switch);
    const auto on_node = std::min(shape.gpus_per_node, shape.gpus - n * shape.gpus_per_node);
    for (std::int64_t i = 0; i < on_node; ++i) {
      // Pools on different accelerators take whole nodes (trainer_accelerator).
      const Accelerator& node_hw = shape.disaggregated() && shape.trainer_gpu(n * shape.gpus_per_node + i) ? train_hw : hw;
      const std::string gpu = fmt::format("node{}-gpu{}", n, i);
      t.nodes.push_back(gpu);
      t.kinds.push_back(NodeKind::Gpu);
      t.links.push_back({gpu, sw, node_hw.scale_up_bytes_s});
      if (shape.nodes > 1) t.links.push_back({gpu, "network", node_hw.nic_bytes_s});
      gpus.push_back(gpu);
    }
  }
  t.trainer = gpus.front();
  // Colocated engines fill the GPUs from the first; disaggregated ones the
  // GPUs that are not the trainer's, in order.
  std::vector<std::size_t> rollout;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    if (!shape.disaggregated() || !shape.trainer_gpu(static_cast<std::int64_t>(g))) rollout.push_back(g);
  }
  for (std::int64_t e = 0; e < shape.engines; ++e) {
    std::vector<std::string> engine;
    for (std::int64_t r = 0; r < shape.tensor_parallel; ++r)
      engine.push_back(gpus[rollout[static_cast<std::size_t>(e * shape.tensor_parallel + r)]]);
    t.engines.push_back(std::move(engine));
  }
  return t;
}

}  // namespace april::sim
