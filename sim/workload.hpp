#pragma once
// The seeded long-tail workload generator (trace replay lives in traces/).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/rng.hpp"
#include "base/workload_source.hpp"

namespace april::sim {

using base::GroupSpec;
using base::WorkloadSource;

// Hierarchical long-tail model:
//   per prompt:  log-median = log(response_median_tok * drift(step)) + N(0, sigma_between)
//                pass rate p ~ U(0, 1)
//   per sample:  correct ~ Bernoulli(p); incorrect answers run `incorrect_len_factor` longer;
//                length ~ LogNormal(log-median (+ log factor), sigma_within), at least 1 token.
//   dataset:     with `dataset_prompts` N > 0, the groups cycle through N prompts (epochs):
//                a prompt's length, median offset and pass rate are drawn once, from its own
//                stream, and its samples are drawn afresh each time it comes back, so its
//                lengths repeat in distribution (RhymeRL, Seer) without repeating exactly.
//                N = 0: every prompt is new.
//   drift(step): falls linearly by `drift_dip` until `drift_dip_step`, then rises by
//                `drift_rise_per_step` per step (the fall-then-rise seen in RL training).
struct LongTailParams {
  std::int64_t samples_per_group = 8;
  double prompt_median_tok = 512;
  double prompt_sigma = 0.3;
  double response_median_tok = 1800;
  double sigma_between = 0.6;
  double sigma_within = 0.4;
  double incorrect_len_factor = 3.0;
  double drift_dip = 0.0;
  std::int64_t drift_dip_step = 100;
  double drift_rise_per_step = 0.0;
  std::int64_t dataset_prompts = 0;

  bool operator==(const LongTailParams&) const = default;
  // Whether a group's draw depends on the step that takes it.
  [[nodiscard]] bool drifts() const { return drift_dip != 0.0 || drift_rise_per_step != 0.0; }
};

class SharedGroups;

class LongTailGenerator final : public WorkloadSource {
 public:
  LongTailGenerator(const LongTailParams& params, std::uint64_t seed);
  // Takes its groups from `shared` (the stream of the same params and seed:
  // sim/shared_groups.hpp), the same groups it would draw alone. A
  // generator whose lengths drift with the step draws its own.
  LongTailGenerator(const LongTailParams& params, std::uint64_t seed, std::shared_ptr<SharedGroups> shared);
  ~LongTailGenerator() override;
  LongTailGenerator(const LongTailGenerator&) = default;
  LongTailGenerator& operator=(const LongTailGenerator&) = default;
  GroupSpec next_group(std::int64_t step) override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] double drift_factor(std::int64_t step) const;

 private:
  GroupSpec draw(std::int64_t step);

  LongTailParams p_;
  std::uint64_t seed_;
  base::Rng rng_;
  std::int64_t drawn_ = 0;
  std::shared_ptr<SharedGroups> shared_;
  std::vector<GroupSpec> taken_;  // groups copied from shared_, handed out from taken_next_
  std::size_t taken_next_ = 0;
};

// A generator of the scenario's workload keys that shares its groups with
// the process's other generators of the same keys and seed.
std::unique_ptr<LongTailGenerator> shared_long_tail_generator(const LongTailParams& params, std::uint64_t seed);

// The generator's scenario keys (n_samples_per_prompt, workload.*), declared
// beside the one place that reads them.
void declare_workload_knobs(base::ConfigSchema& schema);
LongTailParams long_tail_params(const base::Config& config);

// Its keys, typed (base::TypedKey): config.get(keys::kName).
namespace keys {
inline constexpr base::IntKey kWorkloadDatasetPrompts{"workload.dataset_prompts"};
inline constexpr base::DoubleKey kWorkloadDriftDip{"workload.drift_dip"};
inline constexpr base::IntKey kWorkloadDriftDipStep{"workload.drift_dip_step"};
inline constexpr base::DoubleKey kWorkloadDriftRisePerStep{"workload.drift_rise_per_step"};
inline constexpr base::DoubleKey kWorkloadIncorrectLenFactor{"workload.incorrect_len_factor"};
inline constexpr base::DoubleKey kWorkloadPromptMedianTok{"workload.prompt_median_tok"};
inline constexpr base::DoubleKey kWorkloadPromptSigma{"workload.prompt_sigma"};
inline constexpr base::DoubleKey kWorkloadResponseMedianTok{"workload.response_median_tok"};
inline constexpr base::DoubleKey kWorkloadSigmaBetween{"workload.sigma_between"};
inline constexpr base::DoubleKey kWorkloadSigmaWithin{"workload.sigma_within"};
}  // namespace keys

}  // namespace april::sim
