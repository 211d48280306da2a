#pragma once
// The machine's speed over time, read from a profile taken in slices.
#include <optional>
#include <vector>

#include "studies/calibration.hpp"

namespace april::studies {

// How much slower than on average the machine ran while each slice of the
// profile was measured (Profile::slices, in order). Per slice, its points'
// measured time over the median time of their shapes across the whole
// profile (an iteration's shape: batch and prefill; a train step's: samples,
// tokens and longest), divided by the same ratio over all the profile's
// points. Ratios to each shape's own median, not to the fitted model, so that
// the model's error at a shape does not read as drift. 1.10: the slice ran
// 10% slower than the profile on average. nullopt: the slice has no point
// whose shape was measured more than once.
std::vector<std::optional<double>> slice_slowdowns(const Profile& p);

}  // namespace april::studies
