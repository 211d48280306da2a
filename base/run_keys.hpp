#pragma once
// The keys that fix a run's shape, read by every layer (the workload
// generator, the loop, both backends, the studies): typed and named once.
// Each is declared with its help and bounds by the module that owns it
// (scenario: seed, steps; rl/loop_knobs: the batch and the cap;
// sim/workload: the samples per prompt).
#include "base/config.hpp"

namespace april::base::keys {

inline constexpr IntKey kSeed{"seed"};
inline constexpr IntKey kSteps{"steps"};
inline constexpr IntKey kStopStalenessAbove{"stop_after_staleness_above"};
inline constexpr IntKey kRolloutBatchSize{"rollout_batch_size"};
inline constexpr IntKey kSamplesPerPrompt{"n_samples_per_prompt"};
inline constexpr IntKey kMaxResponseLen{"max_response_len"};
inline constexpr BoolKey kDynamicSampling{"filter.dynamic_sampling"};
inline constexpr BoolKey kKeepWhenInsufficient{"filter.keep_when_insufficient"};

}  // namespace april::base::keys
