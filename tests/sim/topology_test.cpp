#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/config.hpp"
#include "sim/topology.hpp"
#include "sim/train_sync_knobs.hpp"
#include "test_support.hpp"

namespace april::sim {
namespace {

constexpr double GB = 1e9;

TEST(Topology, SingleLinkTakesBytesOverBandwidth) {
  Topology t{{"trainer", "gpu"}, {{"trainer", "gpu", 10 * GB}}, "trainer", {{"gpu"}}, {}};
  const auto plan = plan_weight_sync(t, 8 * GB);
  EXPECT_DOUBLE_EQ(plan.time_s, 0.8);
  EXPECT_EQ(plan.bottleneck, "trainer-gpu");
}

// Two engines behind different bottlenecks (10 GB/s and 5 GB/s): the slower
// path decides. A shared first hop carries the (single) shard once.
TEST(Topology, TwoPathsWithDifferentBottlenecks) {
  Topology t{
      {"trainer", "sw", "a", "b"}, {{"trainer", "sw", 100 * GB}, {"sw", "a", 10 * GB}, {"sw", "b", 5 * GB}}, "trainer", {{"a"}, {"b"}}, {}};
  const auto plan = plan_weight_sync(t, 10 * GB);
  EXPECT_DOUBLE_EQ(plan.time_s, 2.0);  // 10 GB over 5 GB/s
  EXPECT_EQ(plan.bottleneck, "sw-b");
  EXPECT_DOUBLE_EQ(plan.path_bottleneck_bytes_s[0], 10 * GB);
  EXPECT_DOUBLE_EQ(plan.path_bottleneck_bytes_s[1], 5 * GB);
}

TEST(Topology, WidestPathIsChosen) {
  // trainer -> x -> gpu has bottleneck 4; trainer -> y -> gpu has 8 (but a slower first hop than x's).
  Topology t{{"trainer", "x", "y", "gpu"},
             {{"trainer", "x", 50 * GB}, {"x", "gpu", 4 * GB}, {"trainer", "y", 8 * GB}, {"y", "gpu", 20 * GB}},
             "trainer",
             {{"gpu"}},
             {}};
  EXPECT_DOUBLE_EQ(plan_weight_sync(t, 8 * GB).time_s, 1.0);
}

TEST(Topology, TensorParallelShardsShareALinkOncePerShard) {
  // Two engines of TP 2 behind one 10 GB/s link: two distinct shards of 4 GB cross it.
  Topology t{{"trainer", "sw", "e0", "e1", "e2", "e3"},
             {{"trainer", "sw", 10 * GB}, {"sw", "e0", 100 * GB}, {"sw", "e1", 100 * GB}, {"sw", "e2", 100 * GB}, {"sw", "e3", 100 * GB}},
             "trainer",
             {{"e0", "e1"}, {"e2", "e3"}},
             {}};
  EXPECT_DOUBLE_EQ(plan_weight_sync(t, 8 * GB).time_s, 0.8);
}

TEST(Topology, DisconnectedEngineIsAnErrorNamingIt) {
  Topology t{{"trainer", "a", "island"}, {{"trainer", "a", 10 * GB}}, "trainer", {{"a"}, {"island"}}, {}};
  try {
    plan_weight_sync(t, GB);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("engine 1 GPU 'island' is not connected"), std::string::npos) << e.what();
  }
  Topology unknown{{"trainer"}, {}, "trainer", {{"ghost"}}, {}};
  EXPECT_THROW(plan_weight_sync(unknown, GB), std::invalid_argument);
}

TEST(Topology, JsonErrorsNameTheField) {
  const auto j = nlohmann::json::parse(R"({"nodes": ["t", "g"], "links": [{"a": "t", "b": "g", "GB_s": -1}],
                                           "trainer": "t", "engines": [["g"]]})");
  try {
    topology_from_json(j, "topo.json");
    FAIL();
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("topo.json: /links/0/GB_s: expected a positive number"), std::string::npos) << e.what();
  }
  const auto ok = topology_from_json(nlohmann::json::parse(R"({"nodes": ["t", "g"], "links": [{"a": "t", "b": "g", "GB_s": 2}],
                                                             "trainer": "t", "engines": [["g"]]})"),
                                     "topo.json");
  EXPECT_DOUBLE_EQ(plan_weight_sync(ok, 4 * GB).time_s, 2.0);
}

std::string topology_error(const std::string& text) {
  try {
    (void)topology_from_json(nlohmann::json::parse(text), "topo.json");
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// A missing field deep inside an array is named by its whole JSON path.
TEST(Topology, AMissingFieldDeepInAnArrayNamesItsPath) {
  EXPECT_NE(topology_error(R"({"nodes": ["t", "g0", "g1"], "links": [{"a": "t", "b": "g0", "GB_s": 1}, {"a": "t", "b": "g1"}],
                               "trainer": "t", "engines": [["g0"], ["g1"]]})")
                .find("topo.json: /links/1/GB_s: missing"),
            std::string::npos);
  EXPECT_NE(topology_error(R"({"nodes": ["t", {"kind": "gpu"}], "links": [], "trainer": "t", "engines": []})")
                .find("topo.json: /nodes/1/name: missing"),
            std::string::npos);
  EXPECT_NE(topology_error(R"({"nodes": ["t", "g"], "links": [], "trainer": "t", "engines": [["g", 3]]})")
                .find("topo.json: /engines/0/1: a number"),
            std::string::npos);
}

TEST(Topology, UnknownFieldsAndSharedGpusAreErrorsNamingThem) {
  EXPECT_NE(topology_error(R"({"nodes": ["t", "g"], "links": [], "trainer": "t", "engines": [["g"]], "engine": 1})")
                .find("topo.json: /engine: an unknown field"),
            std::string::npos);
  EXPECT_NE(topology_error(R"({"nodes": ["t", "g"], "links": [{"a": "t", "b": "g", "GB_s": 2, "gbps": 3}], "trainer": "t",
                               "engines": [["g"]]})")
                .find("topo.json: /links/0/gbps: an unknown field"),
            std::string::npos);
  EXPECT_NE(topology_error(R"({"nodes": ["t", "g0", "g1"], "links": [], "trainer": "t", "engines": [["g0", "g1"], ["g1"]]})")
                .find("topo.json: /engines/1: GPU 'g1' is already engine 0's"),
            std::string::npos);
  EXPECT_NE(
      topology_error(R"({"nodes": ["t", "g0"], "links": [], "trainer": "t", "engines": [["g0", "g0"]]})").find("GPU 'g0' is listed twice"),
      std::string::npos);
}

// Weights live in GPU memory: a node declared a switch, NIC or host cannot be
// an engine member or the trainer, in a file or in code.
TEST(Topology, ASwitchUsedAsAGpuIsAnErrorNamingIt) {
  const std::string nodes =
      R"("nodes": ["t", {"name": "sw", "kind": "switch"}, {"name": "g", "kind": "gpu"}, {"name": "nic0", "kind": "nic"}],
                               "links": [{"a": "t", "b": "sw", "GB_s": 1}, {"a": "sw", "b": "g", "GB_s": 1}])";
  EXPECT_NE(topology_error("{" + nodes + R"(, "trainer": "t", "engines": [["g", "sw"]]})")
                .find("topo.json: /engines/0/1: 'sw' is declared a switch (/nodes/1), not a GPU"),
            std::string::npos);
  EXPECT_NE(topology_error("{" + nodes + R"(, "trainer": "nic0", "engines": [["g"]]})")
                .find("topo.json: /trainer: 'nic0' is declared a nic (/nodes/3), not a GPU"),
            std::string::npos);
  EXPECT_NE(topology_error(R"({"nodes": [{"name": "t", "kind": "router"}], "links": [], "trainer": "t", "engines": []})")
                .find("topo.json: /nodes/0/kind: 'router' is not gpu, switch, nic or host"),
            std::string::npos);
  EXPECT_NE(topology_error(R"({"nodes": ["t", {"name": "t"}], "links": [], "trainer": "t", "engines": []})")
                .find("topo.json: /nodes/1: node 't' is already /nodes/0"),
            std::string::npos);
  // The declared kinds reach plan_weight_sync, which checks code-built topologies too.
  Topology code{
      {"t", "sw", "g"}, {{"t", "sw", 10 * GB}, {"sw", "g", 10 * GB}}, "t", {{"sw"}}, {NodeKind::Gpu, NodeKind::Switch, NodeKind::Gpu}};
  try {
    (void)plan_weight_sync(code, 1 * GB);
    FAIL() << "a switch held a shard";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("engine 0's rank 0 is 'sw', which is declared a switch, not a GPU"), std::string::npos)
        << e.what();
  }
  code.engines = {{"g"}};
  EXPECT_DOUBLE_EQ(plan_weight_sync(code, 1 * GB).time_s, 0.1);
  // Every preset declares its switches, and passes its own check.
  for (const auto& p : {"single-node", "two-nodes-ib", "separate-racks"}) {
    const auto t = preset_topology(p, 2, 2, 450 * GB, 400 * GB, 12.5 * GB);
    EXPECT_EQ(t.kinds.size(), t.nodes.size()) << p;
    EXPECT_GT(std::count(t.kinds.begin(), t.kinds.end(), NodeKind::Switch), 0) << p;
    EXPECT_NO_THROW((void)plan_weight_sync(t, 1 * GB)) << p;
  }
}

// A preset builds a node per GPU: the GPU count is checked before it is built
// (cluster.tensor_parallel=4297015 used to build a 7 GB graph first).
TEST(Topology, APresetIsNotBuiltForAnImpossibleCluster) {
  EXPECT_THROW(april::testing::Fixture("default", {"topology.preset=single-node", "cluster.tensor_parallel=4297015"}), base::ConfigError);
  april::testing::Fixture f("default", {"topology.preset=single-node", "cluster.tensor_parallel=1000", "cluster.engines=1000"});
  try {
    scenario::validate_scenario(f.config);
    FAIL();
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 1000000 GPUs, but cluster.gpus is 8"), std::string::npos) << e.what();
  }
}

TEST(Topology, PresetsSeparateRacksIsBoundByTheRackLink) {
  const auto t = preset_topology("separate-racks", 4, 2, 450 * GB, 400 * GB, 12.5 * GB);
  const auto plan = plan_weight_sync(t, 8 * GB);
  // Two distinct TP shards of 4 GB cross the 12.5 GB/s rack link once each.
  EXPECT_DOUBLE_EQ(plan.time_s, 8.0 / 12.5);
  EXPECT_EQ(plan.bottleneck, "rackA-tor-rackB-tor");
  EXPECT_THROW(preset_topology("three-nodes", 4, 2, 1, 1, 1), std::invalid_argument);
}

TEST(Topology, ReplacesTheBandwidthFigureInTheScenario) {
  april::testing::Fixture flat("default", {"sync.latency_s=0"});
  april::testing::Fixture racks("default", {"sync.latency_s=0", "topology.preset=separate-racks"});
  // Qwen3-4B: 4,022,468,096 bf16 parameters.
  EXPECT_NEAR(sim::weight_sync(flat.config).time_s, 8.044936192 / 100, 1e-9);
  EXPECT_NEAR(sim::weight_sync(racks.config).time_s, 8.044936192 / 12.5, 1e-9);
  april::testing::Fixture bad("default", {"topology.file=/nonexistent/topo.json"});
  EXPECT_THROW(scenario::validate_scenario(bad.config), base::ConfigError);
}

// A topology file's engines must have the scenario's tensor-parallel size:
// four one-GPU engines under TP 2 are refused, naming both.
TEST(Topology, EnginesMustMatchTheTensorParallelSize) {
  const auto path = std::filesystem::temp_directory_path() / "april_topology_tp.json";
  {
    std::ofstream f(path);
    f << R"({"nodes": ["t", "a", "b", "c", "d"], "links": [{"a": "t", "b": "a", "GB_s": 10}, {"a": "t", "b": "b", "GB_s": 10},
             {"a": "t", "b": "c", "GB_s": 10}, {"a": "t", "b": "d", "GB_s": 10}], "trainer": "t",
             "engines": [["a"], ["b"], ["c"], ["d"]]})";
  }
  april::testing::Fixture f("default", {"topology.file=" + path.string()});  // 4 engines at TP 2
  try {
    (void)sim::weight_sync(f.config);
    FAIL() << "accepted one-GPU engines under TP 2";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("engine 0 has 1 GPU, but cluster.tensor_parallel is 2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace april::sim
