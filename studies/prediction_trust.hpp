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

struct ComponentErrors {
  int serving_rows = 0, training_rows = 0;
  double serving_left_out = 0, training_left_out = 0;  // median |error|, leave-one-out
};

const std::vector<CheckedRunKind>& checked_run_kinds();
const std::vector<CheckedRunAccelerator>& checked_run_accelerators();
const ComponentErrors& component_errors();

// "trust: workload ...; engine ...; trainer ...; published runs of this kind ...; on this accelerator ..."
// `model`: the scenario's, already resolved; without it, resolved from `model`.
std::string prediction_trust_line(const base::Config& c, const sim::ModelArch& model, const std::string& trace);
std::string prediction_trust_line(const base::Config& c, const std::string& trace);

}  // namespace april::studies
