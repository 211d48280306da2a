#include "studies/engines_validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "base/run_keys.hpp"
#include "base/stats.hpp"
#include "rl/loop_knobs.hpp"
#include "rl/rl_loop.hpp"
#include "scenario/simulation.hpp"
#include "sim/engine_knobs.hpp"
#include "traces/trace_workload.hpp"

namespace april::studies {

namespace {

// A sample still running when the live run stopped: its length is unknown.
constexpr std::int32_t kStillRunning = -1;

// Rollout phases shorter than this took no iteration (the batch was in the buffer).
constexpr double kInstantS = 0.01;

}  // namespace

base::Config engines_twin(const base::Config& scenario, const Calibration& calibration, std::int64_t servers, std::int64_t slots) {
  base::Config c = scenario;
  const std::string where = "validate --engines";
  c.set_from_text("cluster.mode", "colocated", where);
  c.set_from_text("cluster.tensor_parallel", "1", where);
  c.set(sim::keys::kClusterGpus, servers, where);
  c.set(sim::keys::kClusterEngines, servers, where);
  c.set(sim::keys::kEngineMaxRunning, slots, where);
  c.set_from_text("engine.kv_capacity_tok", "1000000000", where);
  // What `april profile --engine` assumes of the servers.
  c.set_from_text("engine.prefill", "batched", where);
  c.set_from_text("filter.dynamic_sampling", "false", where);
  c.set_from_text("topology.preset", "none", where);
  c.set_from_text("topology.file", "", where);
  base::load_config_text(c, calibration_scenario_json(calibration).dump(), "calibration");
  // Rollout only: the live run neither trains nor loads weights.
  c.set_from_text("train.time_model", "zero", where);
  c.set_from_text("sync.time_model", "zero", where);
  // An abort travels to the server, which goes on generating meanwhile, then
  // answers with what each request holds: the profiled abort is that trip.
  c.set(sim::keys::kEngineAbortLatencyS, calibration.abort_latency_s, where);
  c.set(sim::keys::kEngineAbortConfirmS, 0.0, where);
  return c;
}

nlohmann::json EnginesValidationReport::to_json() const {
  nlohmann::json j;
  j["urls"] = urls;
  j["warmup_steps"] = warmup_steps;
  j["policies"] = nlohmann::json::array();
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const auto& p = policies[i];
    nlohmann::json steps = nlohmann::json::array();
    for (std::size_t s = 0; s < p.live.size() && s < p.sim.size(); ++s) {
      steps.push_back({{"step", s},
                       {"live_rollout_s", p.live[s].rollout_time_s},
                       {"sim_rollout_s", p.sim[s].rollout_time_s},
                       {"live_tokens_generated", p.live[s].tokens_generated},
                       {"sim_tokens_generated", p.sim[s].tokens_generated},
                       {"live_groups_submitted", p.live[s].groups_submitted},
                       {"sim_groups_submitted", p.sim[s].groups_submitted},
                       {"live_groups_aborted", p.live[s].groups_aborted},
                       {"sim_groups_aborted", p.sim[s].groups_aborted},
                       {"live_tokens_carried", p.live[s].tokens_carried},
                       {"sim_tokens_carried", p.sim[s].tokens_carried}});
    }
    nlohmann::json pj = {{"policy", p.policy},
                         {"median_error", p.median_error},
                         {"p90_error", p.p90_error},
                         {"live_rollout_tok_s", p.live_rollout_tok_s},
                         {"sim_rollout_tok_s", p.sim_rollout_tok_s},
                         {"requests", p.requests},
                         {"aborted", p.aborted},
                         {"steps", steps}};
    if (i < gain_measured.size() && gain_measured[i]) pj["gain_measured"] = *gain_measured[i];
    if (i < gain_predicted.size() && gain_predicted[i]) pj["gain_predicted"] = *gain_predicted[i];
    j["policies"].push_back(pj);
  }
  return j;
}

EnginesValidationReport validate_engines(const base::Config& scenario, const policies::PolicyRegistry& registry,
                                         const std::vector<std::string>& policies, const live::LiveTask& task,
                                         const Calibration& calibration, const live::HttpBackendOptions& http, std::int64_t warmup_steps,
                                         const std::function<void(const std::string&)>& progress) {
  EnginesValidationReport report;
  report.urls = http.urls;
  report.warmup_steps = warmup_steps;
  const std::int64_t steps = scenario.get(base::keys::kSteps);
  const std::int64_t n = scenario.get(base::keys::kSamplesPerPrompt);
  const auto cap = static_cast<std::int32_t>(scenario.get(base::keys::kMaxResponseLen));
  const auto servers = static_cast<std::int64_t>(http.urls.size());
  for (const auto& name : policies) {
    auto policy = registry.get(name).make(scenario);
    if (policy->overlaps()) {
      throw std::invalid_argument(
          fmt::format("validate --engines compares rollout phases: policy {} overlaps training with rollout", name));
    }
    EnginePolicyValidation pv;
    pv.policy = name;
    // Live: rollout only on the servers, from the first prompt.
    live::HttpBackend backend(http, task);
    const auto workload = task.workload(n, 0);
    const auto loop = rl::make_loop(scenario, backend, *policy, *workload, servers);
    std::map<std::int64_t, std::vector<std::int32_t>> lengths;  // by group id: the draw index
    loop->on_batch = [&](std::int64_t, const auto& ids) {
      for (const auto& [id, prompt] : ids) {
        for (const auto& segs : loop->group_segments(id)) {
          std::int32_t len = 0;
          for (const auto& seg : segs) len += seg.tokens;
          lengths[id].push_back(len);
        }
      }
    };
    for (std::int64_t s = 0; s < steps; ++s) {
      pv.live.push_back(loop->run_step());
      if (progress) progress(fmt::format("{}: live step {} of {} ({:.2f} s rollout)", name, s + 1, steps, pv.live.back().rollout_time_s));
    }
    for (const auto id : loop->buffer()) {
      auto& l = lengths[id];
      for (const auto& smp : loop->group_samples(id)) l.push_back(smp.finished ? smp.generated_tok : kStillRunning);
    }
    pv.requests = backend.requests_answered();
    pv.aborted = backend.requests_aborted();
    // The twin replays the groups drawn, in order, with their prompts and the
    // lengths measured; a sample still running at the end (or a group never
    // seen finished) runs to the cap, as it was running live.
    const std::int64_t drawn = workload->next_index();
    const auto fresh = task.workload(n, 0);
    std::vector<base::GroupSpec> groups;
    for (std::int64_t g = 0; g < drawn; ++g) {
      base::GroupSpec spec = fresh->next_group(0);
      spec.correct.clear();
      const auto it = lengths.find(g);
      spec.response_tok.assign(static_cast<std::size_t>(n), cap);
      if (it != lengths.end() && static_cast<std::int64_t>(it->second.size()) == n) {
        for (std::size_t k = 0; k < it->second.size(); ++k) spec.response_tok[k] = it->second[k] == kStillRunning ? cap : it->second[k];
      }
      groups.push_back(std::move(spec));
    }
    const base::Config twin = engines_twin(scenario, calibration, servers, backend.max_running_per_engine());
    auto sim_backend = scenario::make_sim_backend(twin);
    auto sim_policy = registry.get(name).make(twin);
    traces::TraceReplay replay(std::move(groups), "live " + name);
    const auto sim_loop = rl::make_loop(twin, *sim_backend, *sim_policy, replay, servers);
    for (std::int64_t s = 0; s < steps; ++s) pv.sim.push_back(sim_loop->run_step());
    // Errors after the warm-up, on the rollout phase.
    double live_s = 0, sim_s = 0, live_tok = 0, sim_tok = 0;
    for (std::size_t s = static_cast<std::size_t>(warmup_steps); s < pv.live.size(); ++s) {
      const double meas = pv.live[s].rollout_time_s, pred = pv.sim[s].rollout_time_s;
      live_s += meas;
      sim_s += pred;
      live_tok += static_cast<double>(pv.live[s].tokens_generated);
      sim_tok += static_cast<double>(pv.sim[s].tokens_generated);
      if (meas >= kInstantS) pv.step_error.push_back(std::fabs(pred - meas) / meas);
    }
    pv.median_error = base::sample_quantile(pv.step_error, 0.5);
    pv.p90_error = base::sample_quantile(pv.step_error, 0.9);
    pv.live_rollout_tok_s = live_s > 0 ? live_tok / live_s : 0.0;
    pv.sim_rollout_tok_s = sim_s > 0 ? sim_tok / sim_s : 0.0;
    report.policies.push_back(std::move(pv));
  }
  const auto& first = report.policies.front();
  for (const auto& p : report.policies) {
    const bool base_ok = first.live_rollout_tok_s > 0 && first.sim_rollout_tok_s > 0;
    report.gain_measured.push_back(base_ok ? std::optional<double>(p.live_rollout_tok_s / first.live_rollout_tok_s - 1) : std::nullopt);
    report.gain_predicted.push_back(base_ok ? std::optional<double>(p.sim_rollout_tok_s / first.sim_rollout_tok_s - 1) : std::nullopt);
  }
  return report;
}

}  // namespace april::studies
