#pragma once
// `april validate --engines URL,...`: the simulator's rollout prediction
// against rollout-only runs on inference servers over HTTP (SGLang or april
// serve). Each policy runs on the servers from the same first prompt; its
// twin is the simulator with one engine per server, calibrated to a
// server's profile (`april profile --engine`, then `april calibrate`),
// replaying the groups the live run drew with the response lengths it
// measured. Colocated policies only: rollout only, nothing trains, so the
// comparison is the rollout phase, step by step.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/live/http_backend.hpp"
#include "base/config.hpp"
#include "policies/registry.hpp"
#include "rl/step_metrics.hpp"
#include "studies/calibration.hpp"
#include "tasks/live_task.hpp"

namespace april::studies {

struct EnginePolicyValidation {
  std::string policy;
  std::vector<rl::StepMetrics> live, sim;
  std::vector<double> step_error;  // |sim - live| / live rollout time, per step after the warm-up that took time
  double median_error = 0, p90_error = 0;
  double live_rollout_tok_s = 0, sim_rollout_tok_s = 0;  // after the warm-up
  std::int64_t requests = 0, aborted = 0;
};

struct EnginesValidationReport {
  std::vector<std::string> urls;
  std::int64_t warmup_steps = 0;
  std::vector<EnginePolicyValidation> policies;
  // Each policy's rollout throughput over the first one's (sync), measured and predicted.
  std::vector<std::optional<double>> gain_measured, gain_predicted;
  [[nodiscard]] nlohmann::json to_json() const;
};

// The twin of a fleet: `servers` engines of `slots` running requests,
// batched prefill, the calibrated engine; no train or sync time (rollout only).
base::Config engines_twin(const base::Config& scenario, const Calibration& calibration, std::int64_t servers, std::int64_t slots);

EnginesValidationReport validate_engines(const base::Config& scenario, const policies::PolicyRegistry& registry,
                                         const std::vector<std::string>& policies, const live::LiveTask& task,
                                         const Calibration& calibration, const live::HttpBackendOptions& http, std::int64_t warmup_steps,
                                         const std::function<void(const std::string&)>& progress = {});

}  // namespace april::studies
