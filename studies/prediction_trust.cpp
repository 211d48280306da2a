#include "studies/prediction_trust.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sim/engine_knobs.hpp"
#include "sim/model_catalog.hpp"
#include "sim/train_sync_knobs.hpp"

namespace april::studies {

namespace {

// The checks' figures: `april components` (calibration/) and
// `april reproduce --no-fit examples/published/*.json` (step times and
// speed-ups). Kept equal to them by ctest.
constexpr int kServingRows = 76, kTrainingRows = 35;
constexpr double kServingLeftOut = 0.098, kTrainingLeftOut = 0.095;

}  // namespace

// Each kind's rows are grouped over every file by the row's own model and
// train.framework (a file may compare an FSDP and a Megatron trainer).
const std::vector<CheckedRunKind>& checked_run_kinds() {
  static const std::vector<CheckedRunKind> kinds = {
      {"llama", "megatron", 4, 0.0672}, {"qwen2", "fsdp", 15, 0.3032},         {"qwen2", "megatron", 3, 0.1171},
      {"qwen3", "megatron", 4, 0.2571}, {"qwen3_moe", "megatron", 13, 0.3062}, {"deepseek_v3", "megatron", 6, 0.2188},
  };
  return kinds;
}

// Grouped by the row's own `hardware`. An accelerator's step times can lean one
// way (GB200's published steps are mostly longer than the model's), which a
// kind's median hides.
const std::vector<CheckedRunAccelerator>& checked_run_accelerators() {
  static const std::vector<CheckedRunAccelerator> accelerators = {
      {"gb200", 12, 0.2710, 12, 10},
      {"h100", 13, 0.1731, 13, 5},
      {"h20", 20, 0.2922, 13, 4},
  };
  return accelerators;
}

// The speed-up rows of every file (verl's fully-async and one-step-off tables):
// april's below the published one in all of them.
const CheckedDesignPairs& checked_design_pairs() {
  static const CheckedDesignPairs p{7, 5, 7, -0.4280};
  return p;
}

const ComponentErrors& component_errors() {
  static const ComponentErrors e{kServingRows, kTrainingRows, kServingLeftOut, kTrainingLeftOut};
  return e;
}

std::string prediction_trust_line(const base::Config& c, const std::string& trace) {
  return prediction_trust_line(c, sim::resolve_model(c.get(sim::keys::kModel)), trace);
}

std::string prediction_trust_line(const base::Config& c, const sim::ModelArch& model, const std::string& trace) {
  std::string workload;
  if (!trace.empty()) {
    workload = fmt::format("the lengths of trace {}", trace);
  } else {
    bool own = false;
    const auto assigned = c.assigned();
    for (auto it = assigned.begin(); it != assigned.end(); ++it) own = own || it.key().rfind("workload.", 0) == 0;
    workload = own ? "the long-tail generator with your workload.* keys" : "the long-tail generator's default lengths, not your prompts'";
  }
  const auto& e = component_errors();
  std::string published;
  const auto& framework = c.get(sim::keys::kTrainFramework);
  const auto& kinds = checked_run_kinds();
  const auto kind = std::find_if(kinds.begin(), kinds.end(),
                                 [&](const CheckedRunKind& k) { return k.model_type == model.model_type && k.framework == framework; });
  if (kind == kinds.end()) {
    published = fmt::format("no published run of this kind ({} with {}) was checked", model.model_type, framework);
  } else {
    published = fmt::format(
        "published runs of this kind ({} with {}), nothing fitted: median error {:.0f}% over {} step times and "
        "speed-ups",
        kind->model_type, kind->framework, 100.0 * kind->median_abs_error, kind->figures);
  }
  const auto& accelerators = checked_run_accelerators();
  const auto on_accelerator = [&](const std::string& hardware) {
    const auto on =
        std::find_if(accelerators.begin(), accelerators.end(), [&](const CheckedRunAccelerator& a) { return a.accelerator == hardware; });
    return on == accelerators.end()
               ? fmt::format("no published run on {} was checked", hardware)
               : fmt::format(
                     "on {}: median error {:.0f}% over {} step times and speed-ups, april's step time shorter than published in {} of {}",
                     on->accelerator, 100.0 * on->median_abs_error, on->figures, on->steps_short, on->steps);
  };
  // A trainer on other accelerators than the engines' (train.hardware) is a
  // second accelerator the prediction stands on: both are quoted.
  const auto& hardware = c.get(sim::keys::kHardware);
  const auto& trainer = c.get(sim::keys::kTrainHardware);
  std::string accelerator = on_accelerator(hardware);
  if (!trainer.empty() && trainer != hardware) accelerator += fmt::format("; the trainer's: {}", on_accelerator(trainer));
  return fmt::format(
      "trust: workload from {}; engine within {:.0f}% (median, left out) of {} serving benchmarks, trainer within {:.0f}% of {} "
      "training benchmarks; {}; {} (docs/published-runs.md)",
      workload, 100.0 * e.serving_left_out, e.serving_rows, 100.0 * e.training_left_out, e.training_rows, published, accelerator);
}

std::string design_ranking_line(bool overlapped) {
  const auto& p = checked_design_pairs();
  const auto checked = fmt::format(
      "{} published speed-ups of an overlapped design over colocated sync, nothing fitted, april named the faster design in {} and "
      "gave a smaller speed-up than published in {}, median {:+.0f}%",
      p.pairs, p.faster_right, p.speedup_below, 100.0 * p.median_speedup_error);
  if (!overlapped) {
    return fmt::format("ranking: no published run compared these designs; of the checks' {} (docs/published-runs.md)", checked);
  }
  return fmt::format(
      "ranking: of {}: take a ranking as an order to try, and an overlapped design's gain as more likely understated than "
      "overstated (docs/published-runs.md)",
      checked);
}

}  // namespace april::studies
