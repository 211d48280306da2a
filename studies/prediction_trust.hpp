#pragma once
// How far to trust a prediction: the line `april simulate`, `whatif` and
// `plan` print under their tables. It says where the workload comes from and
// the error measured on predictions of the same kind: the cost models'
// leave-one-out errors on component benchmarks, and the published RL runs of
// this model family and training framework, and of its accelerators (the
// engines', and the trainer's where train.hardware differs), checked with
// nothing fitted
// (docs/published-runs.md). The figures are the checks' own; ctest
// `components.fit_matches_defaults` fails when a check's figure drifts from
// what is recorded here.
#include <string>
#include <vector>

#include "base/config.hpp"
#include "sim/model_arch.hpp"

namespace april::studies {

// One kind of published RL run that `april reproduce --no-fit` checks.
struct CheckedRunKind {
  std::string model_type;  // the config.json's model_type ("qwen2")
  std::string framework;   // train.framework ("fsdp", "megatron")
  int figures = 0;         // step times and speed-ups predicted, over examples/published/*.json
  double median_abs_error = 0;
};

// The published RL runs on one accelerator, checked the same way: how far
// off, and which way the step times err.
struct CheckedRunAccelerator {
  std::string accelerator;  // the row's `hardware` ("gb200")
  int figures = 0;          // step times and speed-ups
  double median_abs_error = 0;
  int steps = 0, steps_short = 0;  // of its step times, how many april predicts shorter than published
};

// The published speed-ups of an overlapped design over colocated sync, checked
// the same way: how often the faster design was named, and which way the
// predicted speed-up errs.
struct CheckedDesignPairs {
  int pairs = 0;
  int faster_right = 0;             // april's speed-up on the same side of 1 as the published one
  int speedup_below = 0;            // april's speed-up below the published one
  double median_speedup_error = 0;  // signed, relative
};

struct ComponentErrors {
  int serving_rows = 0, training_rows = 0;
  double serving_left_out = 0, training_left_out = 0;  // median |error|, leave-one-out
};

const std::vector<CheckedRunKind>& checked_run_kinds();
const std::vector<CheckedRunAccelerator>& checked_run_accelerators();
const CheckedDesignPairs& checked_design_pairs();
const ComponentErrors& component_errors();

// "trust: workload ...; engine ...; trainer ...; published runs of this kind ...; on this accelerator ..."
// `model`: the scenario's, already resolved; without it, resolved from `model`.
std::string prediction_trust_line(const base::Config& c, const sim::ModelArch& model, const std::string& trace);
std::string prediction_trust_line(const base::Config& c, const std::string& trace);

// "ranking: ...": how far to trust an order between designs, for a table that
// compares policies or designs (printed under the trust line). `overlapped`:
// the table holds a design that overlaps rollout and training, the kind the
// published speed-ups compare with colocated sync.
std::string design_ranking_line(bool overlapped);

}  // namespace april::studies
