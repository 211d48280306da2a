#pragma once
// The model and accelerators a scenario names (`model`, `hardware`,
// `train.hardware`), each read from its built-in table or its file once and
// handed on: every part of a run, and the runs of one command whose configs
// differ in other keys (policies, splits), share one resolution instead of
// reading the files again. Each is resolved when a part first needs it, so a
// file's error comes where, and in the order, it always did.
#include <memory>
#include <string>

#include "base/config.hpp"
#include "sim/hardware.hpp"
#include "sim/model_arch.hpp"

namespace april::sim {

class ScenarioInputs {
 public:
  ScenarioInputs() : ScenarioInputs("", "", "") {}
  // Resolves nothing yet: the names are read from `config`.
  explicit ScenarioInputs(const base::Config& config);

  // Whether `config` names the same model and accelerators, so that these
  // inputs are its own.
  [[nodiscard]] bool resolved_from(const base::Config& config) const;

  // Copies share what is resolved, and may be used from several threads.
  [[nodiscard]] const ModelArch& model() const;
  [[nodiscard]] const Accelerator& engine_hw() const;
  // train.hardware's accelerator, else the engines'; unchecked against the
  // cluster (trainer_accelerator checks the pools).
  [[nodiscard]] const Accelerator& named_trainer_hw() const;

  // These inputs with the engines on `hw` (elastic: engines on the trainer's
  // GPUs); the model is shared.
  [[nodiscard]] ScenarioInputs with_engine_hw(const Accelerator& hw) const;

 private:
  ScenarioInputs(std::string model, std::string hardware, std::string train_hardware);
  struct Cache;
  std::string model_name_, hardware_name_, train_hardware_name_;
  std::shared_ptr<Cache> cache_;
};

}  // namespace april::sim
