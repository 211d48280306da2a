#pragma once
// Cluster topology for weight sync: GPUs, hosts, NICs and switches joined by
// links with bandwidths (Boost.Graph). Each engine GPU needs its tensor-
// parallel shard of the weights (weight bytes / TP). Schedule: a pipelined
// tree broadcast. Every GPU receives over its widest path (largest
// bottleneck) from the trainer; the union of those paths is the tree, relays
// forward what they receive, and a link carries each distinct shard once. The
// sync takes as long as the busiest link: max over links of bytes / bandwidth.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace april::sim {

struct TopologyLink {
  std::string a, b;
  double bytes_s = 0;  // each direction
};

// What a node is. A file may leave it undeclared (a bare name); a declared
// switch, NIC or host cannot hold an engine's shard or be the trainer.
enum class NodeKind { Undeclared, Gpu, Switch, Nic, Host };
const char* node_kind_name(NodeKind k);

struct Topology {
  std::vector<std::string> nodes;
  std::vector<TopologyLink> links;
  std::string trainer;                            // where the updated weights start
  std::vector<std::vector<std::string>> engines;  // each engine's GPUs, in TP rank order
  std::vector<NodeKind> kinds;                    // parallel to nodes; empty = all undeclared
};

struct SyncPlan {
  double time_s = 0;
  std::string bottleneck;                       // "a-b" of the busiest link, "" when nothing moves
  std::vector<double> path_bottleneck_bytes_s;  // per engine GPU, engines in order
};

// What each engine GPU receives: its tensor-parallel shard (weights / TP, the
// shards of one engine distinct), or the whole weights, the same bytes for
// every GPU (a broadcast of full tensors that each rank cuts its shard from:
// verl's and slime's NCCL weight updates).
enum class SyncPayload { TpShards, FullWeights };

// Throws std::invalid_argument naming an unknown node, a bad link, a switch
// (NIC, host) used as a GPU, or an engine GPU that no path reaches.
SyncPlan plan_weight_sync(const Topology& topo, double weight_bytes, SyncPayload payload = SyncPayload::TpShards);

// Presets. Engines fill GPUs in order, `tp` GPUs each.
std::vector<std::string> topology_presets();
Topology preset_topology(const std::string& name, std::int64_t engines, std::int64_t tp, double nvlink_bytes_s, double node_network_bytes_s,
                         double rack_link_bytes_s);
// Our JSON form: {"nodes": [...], "links": [{"a", "b", "GB_s"}], "trainer": "...", "engines": [[...], ...]};
// a node is a name or {"name": ..., "kind": "gpu" | "switch" | "nic" | "host"}.
Topology topology_from_json(const nlohmann::json& j, const std::string& where);
Topology read_topology_file(const std::string& path);

}  // namespace april::sim
