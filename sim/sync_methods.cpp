#include "sim/sync_methods.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace april::sim {

namespace {

struct Named {
  SyncMethod method;
  const char* name;
};
constexpr Named kMethods[] = {
    {SyncMethod::PerTensor, "per_tensor"}, {SyncMethod::Bucketed, "bucketed"}, {SyncMethod::CheckpointEngine, "checkpoint_engine"},
    {SyncMethod::CudaIpc, "cuda_ipc"},     {SyncMethod::Storage, "storage"},
};

// Buckets of greedy packing in order: a bucket closes when the next tensor
// would overflow it; a tensor larger than a bucket fills one alone.
std::int64_t packed_buckets(const std::vector<double>& bytes, double bucket_bytes) {
  std::int64_t buckets = 0;
  double filled = 0;
  for (const double b : bytes) {
    if (buckets == 0 || (filled > 0 && filled + b > bucket_bytes)) {
      ++buckets;
      filled = 0;
    }
    filled += b;
  }
  return buckets;
}

}  // namespace

std::optional<SyncMethod> sync_method_named(const std::string& time_model) {
  for (const auto& m : kMethods) {
    if (time_model == m.name) return m.method;
  }
  return std::nullopt;
}

const char* sync_method_name(SyncMethod method) {
  for (const auto& m : kMethods) {
    if (m.method == method) return m.name;
  }
  return "?";
}

std::vector<std::string> sync_method_names() {
  std::vector<std::string> out;
  for (const auto& m : kMethods) out.emplace_back(m.name);
  return out;
}

std::int64_t sync_transfers(SyncMethod method, const std::vector<double>& tensor_bytes, double bucket_bytes, std::int64_t trainer_ranks) {
  if (method == SyncMethod::PerTensor) return static_cast<std::int64_t>(tensor_bytes.size());
  if (!(bucket_bytes > 0)) throw std::invalid_argument("sync: the bucket size must be positive");
  if (method != SyncMethod::CheckpointEngine) return packed_buckets(tensor_bytes, bucket_bytes);
  if (trainer_ranks < 1) throw std::invalid_argument("sync: the checkpoint engine needs at least one trainer rank");
  // checkpoint_engine.py: _ALIGN_SIZE 256 bytes per tensor; the bucket grows
  // to the largest tensor.
  std::vector<double> aligned(tensor_bytes.size());
  std::transform(tensor_bytes.begin(), tensor_bytes.end(), aligned.begin(), [](double b) { return std::ceil(b / 256.0) * 256.0; });
  const double largest = aligned.empty() ? 0.0 : *std::max_element(aligned.begin(), aligned.end());
  const double bucket = std::max(bucket_bytes, largest);
  std::int64_t transfers = 0;
  const auto ranks = static_cast<std::size_t>(trainer_ranks);
  std::vector<double> mine;
  for (std::size_t r = 0; r < ranks && r < aligned.size(); ++r) {
    mine.clear();
    for (std::size_t i = r; i < aligned.size(); i += ranks) mine.push_back(aligned[i]);
    transfers += packed_buckets(mine, bucket);
  }
  return transfers;
}

}  // namespace april::sim
