// The weight syncs on their own paths (sim/sync_paths): CUDA IPC between
// processes on one GPU, and a checkpoint through a shared filesystem. Each
// time is worked by hand from the accelerator's figures and the model's
// tensors, so a change to either formula or to what it reads fails here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/config.hpp"
#include "sim/checkpoint_tensors.hpp"
#include "sim/hardware.hpp"
#include "sim/model_catalog.hpp"
#include "sim/sync_methods.hpp"
#include "sim/train_sync_knobs.hpp"
#include "test_support.hpp"

namespace april::sim {
namespace {

// The default scenario: Qwen3-4B (8.044936192 GB in bf16) on 8 H100s in one
// node, engines at TP 2.
constexpr double kQwen3_4bBytes = 8.044936192e9;

std::int64_t buckets_of_qwen3_4b(double bucket_MiB) {
  std::vector<double> tensor_bytes;
  for (const auto e : checkpoint_tensor_elements(resolve_model("qwen3-4b"))) tensor_bytes.push_back(2.0 * static_cast<double>(e));
  return sync_transfers(SyncMethod::Bucketed, tensor_bytes, bucket_MiB * 1024 * 1024, 1);
}

TEST(SyncPaths, CudaIpcIsBucketsPlusTheGatherPlusTheLoad) {
  const auto h100 = resolve_accelerator("h100");
  april::testing::Fixture f("default", {"sync.time_model=cuda_ipc", "sync.ipc_per_bucket_ms=20", "sync.latency_s=0.5"});
  const auto w = weight_sync(f.config);
  const auto buckets = buckets_of_qwen3_4b(512);
  EXPECT_GT(buckets, 10);
  // One node: every GPU gathers the weights over NVLink; each engine GPU
  // copies its half (TP 2) in HBM.
  EXPECT_NEAR(w.time_s,
              0.5 + static_cast<double>(buckets) * 0.020 + kQwen3_4bBytes / h100.scale_up_bytes_s + kQwen3_4bBytes / 2 / h100.hbm_bytes_s,
              1e-9);
  EXPECT_DOUBLE_EQ(w.bytes, kQwen3_4bBytes);
  EXPECT_NE(w.how.find("cuda_ipc: " + std::to_string(buckets) + " buckets"), std::string::npos) << w.how;

  // Half the bucket size: about twice the buckets, the same bytes.
  april::testing::Fixture small("default", {"sync.time_model=cuda_ipc", "sync.bucket_MB=256", "sync.latency_s=0"});
  const auto more = buckets_of_qwen3_4b(256);
  EXPECT_GT(more, buckets);
  EXPECT_NEAR(weight_sync(small.config).time_s,
              static_cast<double>(more) * 0.020 + kQwen3_4bBytes / h100.scale_up_bytes_s + kQwen3_4bBytes / 2 / h100.hbm_bytes_s, 1e-9);
}

TEST(SyncPaths, CudaIpcAcrossNodesGathersOverTheNic) {
  const auto h100 = resolve_accelerator("h100");
  april::testing::Fixture f("default", {"sync.time_model=cuda_ipc", "cluster.nodes=2", "sync.latency_s=0", "sync.ipc_per_bucket_ms=0"});
  EXPECT_NEAR(weight_sync(f.config).time_s, kQwen3_4bBytes / h100.nic_bytes_s + kQwen3_4bBytes / 2 / h100.hbm_bytes_s, 1e-9);
}

TEST(SyncPaths, CudaIpcIsRefusedOnADisaggregatedCluster) {
  april::testing::Fixture f("default", {"sync.time_model=cuda_ipc", "cluster.mode=disaggregated"});
  try {
    (void)weight_sync(f.config);
    FAIL() << "cuda_ipc ran on a disaggregated cluster";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("needs cluster.mode=colocated"), std::string::npos) << e.what();
  }
}

TEST(SyncPaths, StorageWritesPerTrainerNodeAndEveryEngineGpuReadsItAll) {
  const auto h100 = resolve_accelerator("h100");
  const auto load_s = kQwen3_4bBytes / 2 / h100.hbm_bytes_s;
  april::testing::Fixture one("default",
                              {"sync.time_model=storage", "sync.storage_write_GB_s=2", "sync.storage_read_GB_s=4", "sync.latency_s=1"});
  const auto w = weight_sync(one.config);
  EXPECT_NEAR(w.time_s, 1 + kQwen3_4bBytes / 2e9 + kQwen3_4bBytes / 4e9 + load_s, 1e-9);
  EXPECT_NE(w.how.find(std::to_string(buckets_of_qwen3_4b(512)) + " files written by 1 trainer node"), std::string::npos) << w.how;
  // Two nodes write half each; the read is each GPU's, unchanged.
  april::testing::Fixture two("default", {"sync.time_model=storage", "sync.storage_write_GB_s=2", "sync.storage_read_GB_s=4",
                                          "sync.latency_s=1", "cluster.nodes=2"});
  EXPECT_NEAR(weight_sync(two.config).time_s, 1 + kQwen3_4bBytes / 4e9 + kQwen3_4bBytes / 4e9 + load_s, 1e-9);
  // Disaggregated, only the trainer's nodes write: 16 GPUs, 8 of them training, is one writer.
  april::testing::Fixture split("default", {"sync.time_model=storage", "sync.storage_write_GB_s=2", "sync.storage_read_GB_s=4",
                                            "sync.latency_s=1", "cluster.nodes=2", "cluster.mode=disaggregated", "cluster.train_gpus=8"});
  EXPECT_NEAR(weight_sync(split.config).time_s, 1 + kQwen3_4bBytes / 2e9 + kQwen3_4bBytes / 4e9 + load_s, 1e-9);
}

// The filesystem's total bounds a sync of many engines: the default cluster's
// 8 engine GPUs each read the whole checkpoint, 8 x bytes / 16 GB/s, where
// one alone would read at 4 GB/s; one trainer node writes at its own 2 GB/s,
// under the total. A total above every demand changes nothing.
TEST(SyncPaths, StorageAggregateBandwidthBoundsEveryEngineGpusRead) {
  const auto h100 = resolve_accelerator("h100");
  const auto load_s = kQwen3_4bBytes / 2 / h100.hbm_bytes_s;
  const std::vector<std::string> common = {"sync.time_model=storage", "sync.storage_write_GB_s=2", "sync.storage_read_GB_s=4",
                                           "sync.latency_s=1"};
  auto with = [&](const std::string& extra) {
    auto v = common;
    v.push_back(extra);
    return v;
  };
  april::testing::Fixture bound("default", with("sync.storage_aggregate_GB_s=16"));
  const auto w = weight_sync(bound.config);
  EXPECT_NEAR(w.time_s, 1 + kQwen3_4bBytes / 2e9 + 8 * kQwen3_4bBytes / 16e9 + load_s, 1e-9);
  EXPECT_NE(w.how.find("read by every engine GPU at 4 GB/s, 8 GPUs within the filesystem's 16 GB/s"), std::string::npos) << w.how;
  EXPECT_EQ(w.how.find("all within"), std::string::npos) << w.how;
  // Below one node's write, it bounds the write too.
  april::testing::Fixture both("default", with("sync.storage_aggregate_GB_s=1"));
  EXPECT_NEAR(weight_sync(both.config).time_s, 1 + kQwen3_4bBytes / 1e9 + 8 * kQwen3_4bBytes / 1e9 + load_s, 1e-9);
  EXPECT_NE(weight_sync(both.config).how.find("at 2 GB/s each, all within the filesystem's 1 GB/s"), std::string::npos);
  april::testing::Fixture wide("default", with("sync.storage_aggregate_GB_s=1000"));
  april::testing::Fixture unbounded("default", common);
  EXPECT_EQ(weight_sync(wide.config).time_s, weight_sync(unbounded.config).time_s);
  EXPECT_EQ(weight_sync(wide.config).how, weight_sync(unbounded.config).how);
  EXPECT_THROW(april::testing::Fixture("default", with("sync.storage_aggregate_GB_s=-1")), base::ConfigError);
}

TEST(SyncPaths, BadStorageBandwidthsAreRefusedByName) {
  EXPECT_THROW(april::testing::Fixture("default", {"sync.storage_read_GB_s=0"}), base::ConfigError);
  EXPECT_THROW(april::testing::Fixture("default", {"sync.storage_write_GB_s=-1"}), base::ConfigError);
  EXPECT_THROW(april::testing::Fixture("default", {"sync.ipc_per_bucket_ms=-1"}), base::ConfigError);
}

}  // namespace
}  // namespace april::sim
