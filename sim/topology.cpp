#include "sim/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "base/bounded_read.hpp"
#include "base/config.hpp"
#include "base/json_file.hpp"
#include "base/json_value.hpp"

namespace april::sim {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                    boost::property<boost::edge_weight_t, double, boost::property<boost::edge_index_t, std::size_t>>>;

NodeKind kind_of(const Topology& topo, std::size_t node) { return node < topo.kinds.size() ? topo.kinds[node] : NodeKind::Undeclared; }

}  // namespace

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Gpu:
      return "gpu";
    case NodeKind::Switch:
      return "switch";
    case NodeKind::Nic:
      return "nic";
    case NodeKind::Host:
      return "host";
    case NodeKind::Undeclared:
      break;
  }
  return "undeclared";
}

SyncPlan plan_weight_sync(const Topology& topo, double weight_bytes, SyncPayload payload) {
  std::map<std::string, std::size_t> id;
  for (const auto& n : topo.nodes) {
    if (!id.emplace(n, id.size()).second) throw std::invalid_argument(fmt::format("topology: node '{}' declared twice", n));
  }
  if (!topo.kinds.empty() && topo.kinds.size() != topo.nodes.size()) throw std::logic_error("topology: kinds and nodes differ in size");
  auto node = [&](const std::string& n, const std::string& what) {
    auto it = id.find(n);
    if (it == id.end()) throw std::invalid_argument(fmt::format("topology: {} names unknown node '{}'", what, n));
    return it->second;
  };
  // Weights live in GPU memory: the trainer and every engine member must be GPUs.
  auto gpu = [&](const std::string& n, const std::string& what) {
    const auto v = node(n, what);
    const auto k = kind_of(topo, v);
    if (k != NodeKind::Undeclared && k != NodeKind::Gpu) {
      throw std::invalid_argument(fmt::format("topology: {} is '{}', which is declared a {}, not a GPU", what, n, node_kind_name(k)));
    }
    return v;
  };
  Graph g(id.size());
  for (std::size_t i = 0; i < topo.links.size(); ++i) {
    const auto& l = topo.links[i];
    if (!(l.bytes_s > 0)) throw std::invalid_argument(fmt::format("topology: link {}-{} needs a positive bandwidth", l.a, l.b));
    const auto a = node(l.a, "a link"), b = node(l.b, "a link");
    if (a == b) throw std::invalid_argument(fmt::format("topology: link {}-{} joins a node to itself", l.a, l.b));
    boost::add_edge(a, b, Graph::edge_property_type(l.bytes_s, i), g);
  }
  const auto src = gpu(topo.trainer, "the trainer");

  // Widest paths: maximise the bottleneck (combine = min, compare = greater).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> width(boost::num_vertices(g), 0.0);
  std::vector<std::size_t> pred(boost::num_vertices(g));
  boost::dijkstra_shortest_paths(g, src,
                                 boost::predecessor_map(pred.data())
                                     .distance_map(width.data())
                                     .distance_compare(std::greater<double>())
                                     .distance_combine([](double a, double b) { return std::min(a, b); })
                                     .distance_inf(0.0)
                                     .distance_zero(inf));

  SyncPlan plan;
  std::vector<std::set<std::size_t>> shards_on_link(topo.links.size());
  std::size_t tp = 0;
  for (std::size_t e = 0; e < topo.engines.size(); ++e) {
    const auto& gpus = topo.engines[e];
    if (gpus.empty()) throw std::invalid_argument(fmt::format("topology: engine {} has no GPUs", e));
    if (tp == 0) tp = gpus.size();
    if (gpus.size() != tp) throw std::invalid_argument("topology: every engine needs the same number of GPUs");
    for (std::size_t rank = 0; rank < gpus.size(); ++rank) {
      const auto v = gpu(gpus[rank], fmt::format("engine {}'s rank {}", e, rank));
      if (v != src && width[v] <= 0.0) {
        throw std::invalid_argument(
            fmt::format("topology: engine {} GPU '{}' is not connected to the trainer '{}'", e, gpus[rank], topo.trainer));
      }
      plan.path_bottleneck_bytes_s.push_back(v == src ? inf : width[v]);
      for (auto cur = v; cur != src; cur = pred[cur]) {
        const auto [edge, ok] = boost::edge(pred[cur], cur, g);
        if (!ok) throw std::logic_error("topology: broken predecessor chain");
        shards_on_link[boost::get(boost::edge_index, g, edge)].insert(payload == SyncPayload::FullWeights ? 0 : rank);
      }
    }
  }
  if (tp == 0) throw std::invalid_argument("topology: no engines");
  const double shard_bytes = payload == SyncPayload::FullWeights ? weight_bytes : weight_bytes / static_cast<double>(tp);
  for (std::size_t i = 0; i < topo.links.size(); ++i) {
    const double t = static_cast<double>(shards_on_link[i].size()) * shard_bytes / topo.links[i].bytes_s;
    if (t > plan.time_s) {
      plan.time_s = t;
      plan.bottleneck = topo.links[i].a + "-" + topo.links[i].b;
    }
  }
  return plan;
}

std::vector<std::string> topology_presets() { return {"none", "single-node", "two-nodes-ib", "separate-racks"}; }

Topology preset_topology(const std::string& name, std::int64_t engines, std::int64_t tp, double nvlink, double node_net, double rack) {
  Topology t;
  const std::int64_t engine_gpus = engines * tp;
  auto add_node = [&](std::int64_t node, const std::string& prefix, std::int64_t gpus) {
    const std::string sw = fmt::format("{}node{}-nvswitch", prefix, node);
    t.nodes.push_back(sw);
    t.kinds.push_back(NodeKind::Switch);
    for (std::int64_t i = 0; i < gpus; ++i) {
      const std::string gpu = fmt::format("{}node{}-gpu{}", prefix, node, i);
      t.nodes.push_back(gpu);
      t.kinds.push_back(NodeKind::Gpu);
      t.links.push_back({gpu, sw, nvlink});
    }
    return sw;
  };
  auto assign_engines = [&](const std::vector<std::string>& gpus) {
    for (std::int64_t e = 0; e < engines; ++e) {
      std::vector<std::string> eg;
      for (std::int64_t r = 0; r < tp; ++r) eg.push_back(gpus[static_cast<std::size_t>(e * tp + r)]);
      t.engines.push_back(eg);
    }
  };
  std::vector<std::string> gpus;
  if (name == "single-node") {
    // Colocated: the engines share the node's GPUs; weights start on GPU 0.
    add_node(0, "", std::max<std::int64_t>(8, engine_gpus));
    for (std::int64_t i = 0; i < engine_gpus; ++i) gpus.push_back(fmt::format("node0-gpu{}", i));
    t.trainer = "node0-gpu0";
  } else if (name == "two-nodes-ib") {
    // Two 8-GPU nodes on InfiniBand; half the engines on each node.
    const std::int64_t on_node0 = (engines + 1) / 2;
    if (on_node0 * tp > 8) throw std::invalid_argument("two-nodes-ib: more engine GPUs than two 8-GPU nodes hold");
    t.nodes.push_back("ib-switch");
    t.kinds.push_back(NodeKind::Switch);
    for (std::int64_t n = 0; n < 2; ++n) t.links.push_back({add_node(n, "", 8), "ib-switch", node_net});
    for (std::int64_t i = 0; i < on_node0 * tp; ++i) gpus.push_back(fmt::format("node0-gpu{}", i));
    for (std::int64_t i = 0; i < (engines - on_node0) * tp; ++i) gpus.push_back(fmt::format("node1-gpu{}", i));
    t.trainer = "node0-gpu0";
  } else if (name == "separate-racks") {
    // Trainer node in rack A; engines on nodes of rack B; one link between the racks.
    t.nodes.push_back("rackA-tor");
    t.nodes.push_back("rackB-tor");
    t.kinds.insert(t.kinds.end(), 2, NodeKind::Switch);
    t.links.push_back({"rackA-tor", "rackB-tor", rack});
    const auto trainer_sw = add_node(0, "rackA-", 8);
    t.links.push_back({trainer_sw, "rackA-tor", node_net});
    const std::int64_t nodes_b = std::max<std::int64_t>(1, (engine_gpus + 7) / 8);
    for (std::int64_t n = 0; n < nodes_b; ++n) {
      const auto sw = add_node(n, "rackB-", 8);
      t.links.push_back({sw, "rackB-tor", node_net});
      for (std::int64_t i = 0; i < 8; ++i) gpus.push_back(fmt::format("rackB-node{}-gpu{}", n, i));
    }
    t.trainer = "rackA-node0-gpu0";
  } else {
    throw std::invalid_argument(fmt::format("unknown topology preset '{}'; known: {}", name, fmt::join(topology_presets(), ", ")));
  }
  assign_engines(gpus);
  return t;
}

Topology topology_from_json(const nlohmann::json& j, const std::string& where) {
  // Every value read through base::JsonValue: an error names the file and the
  // JSON path of what is wrong ("topo.json: /links/3/GB_s: missing").
  const base::JsonValue root(j, where);
  if (!j.is_object()) root.fail("a topology must be a JSON object");
  root.only_keys({"nodes", "links", "trainer", "engines", "description"});
  Topology t;
  std::map<std::string, std::size_t> declared;  // name -> index in nodes
  const auto nodes = root.at("nodes").elements();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const base::JsonValue& n = nodes[i];
    NodeKind kind = NodeKind::Undeclared;
    std::string name;
    if (n.raw().is_string()) {
      name = n.string();
    } else if (n.is_object()) {
      n.only_keys({"name", "kind"});
      name = n.at("name").string();
      if (const auto k = n.find("kind")) {
        const std::string text = k->raw().is_string() ? k->string() : k->raw().dump();
        for (auto c : {NodeKind::Gpu, NodeKind::Switch, NodeKind::Nic, NodeKind::Host}) {
          if (text == node_kind_name(c)) kind = c;
        }
        if (kind == NodeKind::Undeclared) k->fail(fmt::format("'{}' is not gpu, switch, nic or host", text));
      }
    } else {
      n.fail("expected a name or {\"name\", \"kind\"}");
    }
    if (!declared.emplace(name, i).second) n.fail(fmt::format("node '{}' is already /nodes/{}", name, declared[name]));
    t.nodes.push_back(name);
    t.kinds.push_back(kind);
  }
  // Weights live in GPU memory: a switch, NIC or host cannot be the trainer or hold a shard.
  auto must_be_gpu = [&](const base::JsonValue& v, const std::string& name) {
    const auto it = declared.find(name);
    if (it == declared.end()) return;  // an unknown name is reported with the links, by plan_weight_sync
    const auto k = t.kinds[it->second];
    if (k != NodeKind::Undeclared && k != NodeKind::Gpu) {
      v.fail(fmt::format("'{}' is declared a {} (/nodes/{}), not a GPU", name, node_kind_name(k), it->second));
    }
  };
  for (const auto& l : root.at("links").elements()) {
    l.only_keys({"a", "b", "GB_s"});
    const double gb_s = l.at("GB_s").number(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
    if (!(gb_s > 0)) l.at("GB_s").fail("expected a positive number of GB/s");
    t.links.push_back({l.at("a").string(), l.at("b").string(), gb_s * 1e9});
  }
  const auto trainer = root.at("trainer");
  t.trainer = trainer.string();
  must_be_gpu(trainer, t.trainer);
  const auto engines = root.at("engines").elements();
  for (const auto& e : engines) {
    std::vector<std::string> gpus;
    for (const auto& x : e.elements()) {
      gpus.push_back(x.string());
      must_be_gpu(x, gpus.back());
    }
    t.engines.push_back(gpus);
  }
  // A GPU holds one engine's shard: one listed twice is a mistake in the file.
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < t.engines.size(); ++i) {
    for (const auto& g : t.engines[i]) {
      const auto [it, fresh] = owner.emplace(g, i);
      if (!fresh) {
        engines[i].fail(it->second == i ? fmt::format("GPU '{}' is listed twice", g)
                                        : fmt::format("GPU '{}' is already engine {}'s", g, it->second));
      }
    }
  }
  return t;
}

Topology read_topology_file(const std::string& path) {
  // Bounded like every small JSON input (base/json_file.hpp); errors name the line.
  const auto text = base::read_file_bounded(path, base::kSmallJsonMaxBytes, "topology file");
  return topology_from_json(base::parse_json_document(text, path), path);
}

}  // namespace april::sim
