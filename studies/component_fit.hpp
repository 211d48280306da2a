#pragma once
// The fit of the engine's and the trainer's defaults on component benchmarks
// (serving and training throughput others published), and its check: every
// row predicted by the fit on all rows, and by the fit on all the others
// (leave-one-out), the error a new setup can expect.
#include <string>
#include <vector>

#include "studies/serving_rows.hpp"
#include "studies/training_rows.hpp"

namespace april::studies {

struct ComponentPrediction {
  std::string id;
  double published = 0;
  double fitted = 0;    // with the fit on every row
  double left_out = 0;  // with the fit on every other row
  [[nodiscard]] double fitted_error() const { return (fitted - published) / published; }
  [[nodiscard]] double left_out_error() const { return (left_out - published) / published; }
};

// What a fit chooses, by name, with its value: printed, and compared with the
// built-in defaults by the drift test.
struct FittedValue {
  std::string key;
  double value = 0;
};

struct ComponentCheck {
  std::vector<FittedValue> fitted;
  std::vector<ComponentPrediction> rows;
  [[nodiscard]] double median_abs_left_out_error() const;
  [[nodiscard]] double median_abs_fitted_error() const;
};

// The engine: compute and HBM efficiency, the per-iteration overhead and the
// per-MoE-layer overhead, by least squares on log throughput.
ComponentCheck check_engine(const std::vector<ServingRow>& rows);

// The trainer: MFU and the per-micro-batch overhead.
ComponentCheck check_trainer(const std::vector<TrainingRow>& rows);

}  // namespace april::studies
