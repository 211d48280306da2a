#include "sim/shared_groups.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "sim/workload.hpp"

namespace april::sim {

SharedGroups::SharedGroups(const LongTailParams& params, std::uint64_t seed, std::size_t max_groups)
    : source_(std::make_unique<LongTailGenerator>(params, seed)), max_groups_(max_groups) {}

SharedGroups::~SharedGroups() = default;

void SharedGroups::copy(std::size_t from, std::size_t count, std::vector<base::GroupSpec>& out) {
  const std::size_t to = std::min(max_groups_, from + count);
  if (from >= to) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  // No step: a stream is made only for a generator that does not drift.
  while (groups_.size() < to) groups_.push_back(source_->next_group(0));
  out.insert(out.end(), groups_.begin() + static_cast<std::ptrdiff_t>(from), groups_.begin() + static_cast<std::ptrdiff_t>(to));
}

std::unique_ptr<LongTailGenerator> SharedGroups::generator_at_end() {
  const std::lock_guard<std::mutex> lock(mutex_);
  while (groups_.size() < max_groups_) groups_.push_back(source_->next_group(0));
  return std::make_unique<LongTailGenerator>(*source_);
}

namespace {

// A stream keeps about this many bytes of groups (a group of n samples is
// about 100 + 5 n bytes), and the process this many streams: 3 seeds of a
// plan's one workload, or of a few of whatif's.
constexpr std::size_t kStreamBytes = std::size_t{16} << 20;
constexpr std::size_t kStreams = 6;

struct Registry {
  std::mutex mutex;
  // Oldest first.
  std::vector<std::tuple<LongTailParams, std::uint64_t, std::shared_ptr<SharedGroups>>> streams;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::shared_ptr<SharedGroups> shared_groups(const LongTailParams& params, std::uint64_t seed) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [p, s, stream] : r.streams) {
    if (s == seed && p == params) return stream;
  }
  const auto group_bytes = static_cast<std::size_t>(100 + 5 * std::max<std::int64_t>(1, params.samples_per_group));
  auto stream = std::make_shared<SharedGroups>(params, seed, std::max<std::size_t>(1, kStreamBytes / group_bytes));
  // A stream let go lives on in the generators that hold it.
  if (r.streams.size() >= kStreams) r.streams.erase(r.streams.begin());
  r.streams.emplace_back(params, seed, stream);
  return stream;
}

}  // namespace april::sim
