#include "sim/scenario_inputs.hpp"

#include <mutex>
#include <optional>

#include "sim/engine_knobs.hpp"
#include "sim/model_catalog.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::sim {

struct ScenarioInputs::Cache {
  std::mutex mutex;
  // Set once, never changed after: references to them stay valid.
  std::optional<ModelArch> model;
  std::optional<Accelerator> engine_hw, trainer_hw;
};

namespace {

// The value in `slot`, resolved by `resolve` the first time; a resolution
// that throws leaves the slot empty, to throw again the next time.
template <typename T, typename F>
const T& once(std::mutex& mutex, std::optional<T>& slot, F resolve) {
  const std::lock_guard<std::mutex> lock(mutex);
  if (!slot) slot.emplace(resolve());
  return *slot;
}

}  // namespace

ScenarioInputs::ScenarioInputs(std::string model, std::string hardware, std::string train_hardware)
    : model_name_(std::move(model)),
      hardware_name_(std::move(hardware)),
      train_hardware_name_(std::move(train_hardware)),
      cache_(std::make_shared<Cache>()) {}

ScenarioInputs::ScenarioInputs(const base::Config& c)
    : ScenarioInputs(c.get(keys::kModel), c.get(keys::kHardware), c.get(keys::kTrainHardware)) {}

bool ScenarioInputs::resolved_from(const base::Config& c) const {
  return c.get(keys::kModel) == model_name_ && c.get(keys::kHardware) == hardware_name_ &&
         c.get(keys::kTrainHardware) == train_hardware_name_;
}

const ModelArch& ScenarioInputs::model() const {
  return once(cache_->mutex, cache_->model, [&] { return resolve_model(model_name_); });
}

const Accelerator& ScenarioInputs::engine_hw() const {
  return once(cache_->mutex, cache_->engine_hw, [&] { return resolve_accelerator(hardware_name_); });
}

const Accelerator& ScenarioInputs::named_trainer_hw() const {
  if (train_hardware_name_.empty() || train_hardware_name_ == hardware_name_) return engine_hw();
  return once(cache_->mutex, cache_->trainer_hw, [&] { return resolve_accelerator(train_hardware_name_); });
}

ScenarioInputs ScenarioInputs::with_engine_hw(const Accelerator& hw) const {
  ScenarioInputs on(model_name_, train_hardware_name_.empty() ? hardware_name_ : train_hardware_name_, train_hardware_name_);
  {
    const std::lock_guard<std::mutex> lock(cache_->mutex);
    on.cache_->model = cache_->model;
  }
  on.cache_->engine_hw = hw;
  return on;
}

}  // namespace april::sim
