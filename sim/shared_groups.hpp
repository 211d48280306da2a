#pragma once
// The groups one long-tail generator (parameters, seed) draws, in order, kept
// for every generator of the same parameters and seed in the process: a
// plan's hundreds of runs share three seeds' workloads (common random
// numbers), and each run drawing them afresh was a twentieth of the search.
// A generator takes group k from here, so it gets the group a generator of
// its own would have drawn k-th; past the kept groups it goes on alone from
// the state the stream's own generator reached there.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/workload_source.hpp"

namespace april::sim {

struct LongTailParams;
class LongTailGenerator;

class SharedGroups {
 public:
  // Keeps at most `max_groups` groups.
  SharedGroups(const LongTailParams& params, std::uint64_t seed, std::size_t max_groups);
  ~SharedGroups();
  SharedGroups(const SharedGroups&) = delete;
  SharedGroups& operator=(const SharedGroups&) = delete;

  [[nodiscard]] std::size_t max_groups() const { return max_groups_; }
  // Groups [from, from + count) clipped to max_groups, appended to `out`,
  // drawn first where none has yet.
  void copy(std::size_t from, std::size_t count, std::vector<base::GroupSpec>& out);
  // The stream's generator once it has drawn max_groups: where a generator
  // past the kept groups goes on from.
  [[nodiscard]] std::unique_ptr<LongTailGenerator> generator_at_end();

 private:
  std::mutex mutex_;
  std::unique_ptr<LongTailGenerator> source_;
  std::vector<base::GroupSpec> groups_;
  std::size_t max_groups_;
};

// The process's stream for (params, seed), made on first use; it keeps a
// bounded number of groups, by their tokens, and a bounded number of
// streams (the oldest is let go).
std::shared_ptr<SharedGroups> shared_groups(const LongTailParams& params, std::uint64_t seed);

}  // namespace april::sim
