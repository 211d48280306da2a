#include "studies/live_validation.hpp"

#include "base/run_keys.hpp"
#include "base/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "adapters/live/live_backend.hpp"
#include "adapters/live/live_config.hpp"
#include "adapters/live/live_memory.hpp"
#include "base/machine_memory.hpp"
#include "rl/loop_knobs.hpp"
#include "rl/rl_loop.hpp"
#include "scenario/design_space.hpp"
#include "scenario/simulation.hpp"
#include "sim/engine_knobs.hpp"
#include "studies/machine_drift.hpp"
#include "traces/trace_workload.hpp"

namespace april::studies {

using live::CountdownTask;
using live::CountdownWorkload;
using live::LiveBackend;
using live::LiveProfiler;
using live::ProfileOptions;

std::vector<base::GroupSpec> live_trace(const std::map<std::int64_t, std::vector<std::int32_t>>& lengths, std::int64_t groups,
                                        std::int64_t samples_per_group, std::int32_t cap, LiveTraceUse use, std::int64_t dataset_prompts) {
  std::vector<base::GroupSpec> out;
  for (std::int64_t i = 0; i < groups; ++i) {
    base::GroupSpec g;
    g.prompt_id = CountdownTask::prompt_id(dataset_prompts > 0 ? i % dataset_prompts : i);
    g.prompt_tok = 3;
    auto it = lengths.find(i);
    const bool known = it != lengths.end() &&
                       std::none_of(it->second.begin(), it->second.end(), [](std::int32_t len) { return len == kUnfinishedSample; });
    if (use == LiveTraceUse::kWhatIf && !known) continue;
    if (it == lengths.end()) {
      g.response_tok.assign(static_cast<std::size_t>(samples_per_group), cap);
    } else {
      for (std::int32_t len : it->second) g.response_tok.push_back(len == kUnfinishedSample ? cap : len);
    }
    out.push_back(std::move(g));
  }
  return out;
}

base::Config simulator_twin(const base::Config& scenario, const Calibration& calibration, bool overlapped) {
  base::Config c = scenario;
  const std::string where = "validate";
  c.set_from_text("cluster.tensor_parallel", "1", where);
  if (overlapped) {
    // The live trainer runs beside the engine on its own thread: one GPU each.
    c.set_from_text("cluster.mode", "disaggregated", where);
    c.set_from_text("cluster.gpus", "2", where);
    c.set_from_text("cluster.rollout_gpus", "1", where);
    c.set_from_text("cluster.train_gpus", "1", where);
  } else {
    c.set_from_text("cluster.mode", "colocated", where);
    c.set_from_text("cluster.gpus", "1", where);
    c.set_from_text("cluster.engines", "1", where);
  }
  c.set(sim::keys::kEngineMaxRunning, scenario.get(live::keys::kLiveSlots), where);
  c.set_from_text("engine.kv_capacity_tok", "1000000000", where);
  c.set_from_text("filter.dynamic_sampling", "false", where);
  c.set_from_text("engine.prefill", scenario.get(live::keys::kLiveExactPrefill) ? "per_token" : "batched", where);
  c.set_from_text("topology.preset", "none", where);
  c.set_from_text("topology.file", "", where);
  base::load_config_text(c, studies::calibration_scenario_json(calibration).dump(), "calibration");
  // The live engine aborts in-process, between iterations: nothing generates
  // while the abort is handled, so its fixed cost comes after the stop
  // (engine.abort_confirm_s), not before it (engine.abort_latency_s, the
  // trip to a remote engine that goes on generating meanwhile). Modelled as
  // latency, the twin ran one more iteration at each abort than the live run.
  c.set(sim::keys::kEngineAbortConfirmS, calibration.abort_latency_s, where);
  c.set(sim::keys::kEngineAbortLatencyS, 0.0, where);
  return c;
}

namespace {

void train_step_ratios(PolicyValidation& pv, const Calibration& c, std::size_t warm) {
  std::vector<double> ratio, implied;
  double compute_s = 0, beside_s = 0;
  for (std::size_t s = warm; s < pv.live_train_steps.size(); ++s) {
    for (const auto& t : pv.live_train_steps[s]) {
      const double alone_s = studies::predicted_train_s(c, t.point);
      const double live_s = t.point.time_s;
      if (!(alone_s > 0) || !(live_s > 0)) continue;
      compute_s += live_s;
      beside_s += t.beside_engine_s;
      // The twin's time for it: the engine's time beside it at the profiled
      // slowdown, then what work is left alone (or all of it beside).
      const double slow = c.train_slowdown_beside_engines;
      const double beside_work_s = t.beside_engine_s / slow;
      const double model_s = beside_work_s >= alone_s ? alone_s * slow : t.beside_engine_s + (alone_s - beside_work_s);
      ratio.push_back(live_s / model_s);
      const double alone_part_s = live_s - t.beside_engine_s;
      if (t.beside_engine_s >= 0.5 * live_s && alone_s > alone_part_s) implied.push_back(t.beside_engine_s / (alone_s - alone_part_s));
    }
  }
  if (!ratio.empty()) pv.train_ratio = base::sample_quantile(ratio, 0.5);
  if (!implied.empty()) pv.train_slowdown_implied = base::sample_quantile(implied, 0.5);
  pv.train_beside_engine_share = compute_s > 0 ? beside_s / compute_s : 0.0;
}

// Every policy's live run exists at once (they take turns, one step each), and
// a profile taken meanwhile keeps a second engine and trainer besides: each
// holds its own weights, optimizer and KV cache. Refused up front, with the
// numbers, when the machine cannot hold them (live_memory.hpp).
void check_validate_memory(const base::Config& scenario, std::size_t arms, bool profiling) {
  const auto lo = live::live_options(scenario, "cpu", -1);
  const live::CountdownTask task(live::task_params(scenario), 1);
  const auto model = live::model_config(lo.model_size, task.vocab(), task.max_prompt_tok() + lo.max_response_len);
  // Every arm warm-starts, so its policy stops after the task's longest answer.
  const auto in =
      live::run_memory_inputs(lo, model, scenario.get(base::keys::kRolloutBatchSize) * scenario.get(base::keys::kSamplesPerPrompt),
                              task.max_prompt_tok(), task.max_answer_tok(), true);
  auto e = live::estimate_live_memory(in);
  const double copies = static_cast<double>(arms) + (profiling ? 1.0 : 0.0);
  e.weights_bytes *= copies;
  e.kv_cache_bytes *= copies;
  live::check_live_memory(e, base::machine_memory_bytes(),
                          fmt::format("april validate ({} live runs{})", arms, profiling ? " and the profiler's engine and trainer" : ""));
}

}  // namespace

ValidationReport validate(const base::Config& scenario, const policies::PolicyRegistry& registry, const std::vector<std::string>& policies,
                          const std::optional<Calibration>& calibration, const ProfileOptions& profile, const std::string& device,
                          const ValidationProgress& progress, std::int64_t warmup_steps) {
  ValidationReport report;
  const auto steps = scenario.get(base::keys::kSteps);
  if (warmup_steps < 0 || warmup_steps >= steps) {
    throw std::invalid_argument(
        fmt::format("{} warm-up steps leave none of the {} steps to compare: use fewer than the steps", warmup_steps, steps));
  }
  const auto n = scenario.get(base::keys::kSamplesPerPrompt);
  const std::int64_t dataset_prompts = live::task_params(scenario).dataset_prompts;
  const auto cap = static_cast<std::int32_t>(scenario.get(base::keys::kMaxResponseLen));
  for (const auto& name : policies) {
    const bool overlapped = scenario::policy_overlaps(scenario, registry, name);
    scenario::validate_scenario(simulator_twin(scenario, calibration.value_or(Calibration{}), overlapped));
  }
  if (device == "cpu") check_validate_memory(scenario, policies.size(), !calibration);
  std::unique_ptr<LiveProfiler> profiler;
  std::int64_t probes_per_round = 0;
  if (!calibration) {
    profiler = std::make_unique<LiveProfiler>(profile);
    const std::int64_t total = profiler->probes_per_pass() * std::max<std::int64_t>(1, profile.repeats);
    probes_per_round = (total + steps - 1) / std::max<std::int64_t>(1, steps);
  }
  // Every policy's live run exists at once and they take turns, one step
  // each: the machine's speed drifts by several percent over minutes, and
  // interleaving puts the same drift in every policy's steps, so the gain
  // between them is measured on equal terms.
  struct LiveArm {
    std::unique_ptr<policies::Policy> policy;
    std::unique_ptr<CountdownTask> task;
    std::unique_ptr<LiveBackend> backend;
    std::unique_ptr<CountdownWorkload> workload;
    std::unique_ptr<rl::RlLoop> loop;
    // Each drawn group's sample lengths by its draw index (its group id: the
    // loop numbers fresh groups in draw order). Not by prompt: a dataset's
    // prompts come back with other lengths.
    std::map<std::int64_t, std::vector<std::int32_t>> lengths;
    // The last trained batch's response lengths, in batch order: the profile's live-batch probes take them.
    std::vector<std::int32_t> last_batch_tok;
  };
  std::vector<LiveArm> arms(policies.size());
  for (std::size_t i = 0; i < policies.size(); ++i) {
    LiveArm& arm = arms[i];
    arm.policy = registry.get(policies[i]).make(scenario);
    arm.task = std::make_unique<CountdownTask>(live::task_params(scenario), static_cast<std::uint64_t>(scenario.get(base::keys::kSeed)));
    auto lo = live::live_options(scenario, device, arm.policy->mask_tokens_staler_than());
    lo.record_iterations = true;
    lo.record_engine_changes = true;  // a few records per iteration: kept for the timeline whether or not one is written
    lo.record_engine_windows = true;
    arm.backend = std::make_unique<LiveBackend>(lo, *arm.task);
    if (progress) progress(fmt::format("{}: warm start", policies[i]), 0.0);
    arm.backend->warm_start();
    arm.workload = std::make_unique<CountdownWorkload>(*arm.task, n);
    arm.loop = rl::make_loop(scenario, *arm.backend, *arm.policy, *arm.workload, 1);  // one device
    arm.loop->on_batch = [&arm](std::int64_t, const auto& ids) {
      arm.last_batch_tok.clear();
      for (const auto& [id, prompt] : ids) {
        for (const auto& segs : arm.loop->group_segments(id)) {
          std::int32_t len = 0;
          for (const auto& seg : segs) len += seg.tokens;
          arm.lengths[id].push_back(len);
          arm.last_batch_tok.push_back(len);
        }
      }
    };
    PolicyValidation pv;
    pv.policy = policies[i];
    pv.overlapped = arm.policy->overlaps();
    report.policies.push_back(std::move(pv));
  }
  // The heap grown before the first live step (one allocator for the whole
  // process): otherwise the policy that first meets a new largest batch pays
  // for growing it, a cost the twin does not model, and the gains over that
  // policy count it against it. Twice the largest train step, because the
  // other runs' tensors placed between leave one step's worth in pieces
  // (docs/calibration.md has the measurements). configure_runtime keeps the pages.
  if (!arms.empty()) {
    if (progress) progress("growing the heap to twice the largest train step", 0.0);
    arms.front().backend->grow_heap_for_train(2 * scenario.get(base::keys::kRolloutBatchSize) * n);
  }
  for (std::int64_t s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < arms.size(); ++i) {
      PolicyValidation& pv = report.policies[i];
      pv.live.push_back(arms[i].loop->run_step());
      // An overlapped run does not pause between steps: its clock (and a
      // train step just started) waits while the other policies take their turn.
      if (pv.overlapped) arms[i].backend->pause_clock();
      pv.live_iterations.push_back(arms[i].backend->take_iteration_log());
      pv.live_train_steps.push_back(arms[i].backend->take_train_log());
      for (auto& c : arms[i].backend->take_engine_changes()) pv.live_engine_changes.push_back(c);
      for (auto& w : arms[i].backend->take_engine_windows()) pv.live_engine_windows.push_back(w);
      if (progress) {
        const auto done = static_cast<double>(s * static_cast<std::int64_t>(arms.size()) + static_cast<std::int64_t>(i) + 1);
        progress(fmt::format("{}: live step {} of {} ({:.2f} s rollout)", pv.policy, s + 1, steps, pv.live.back().rollout_time_s),
                 done / static_cast<double>(steps * static_cast<std::int64_t>(arms.size())));
      }
    }
    if (profiler) {
      // The train probes on a live batch take this round's batches, one per
      // policy in turn: the twin predicts steps at the policy model's answer
      // lengths, not the task's.
      std::vector<std::vector<std::int32_t>> batches;
      for (const LiveArm& arm : arms) batches.push_back(arm.last_batch_tok);
      profiler->use_live_batches(std::move(batches));
      profiler->run(probes_per_round);
      if (progress) {
        progress(fmt::format("profile: {} probes", probes_per_round * (s + 1)), static_cast<double>(s + 1) / static_cast<double>(steps));
      }
    }
  }
  // Groups left in the buffer: a sample that finished there has its length
  // (the twin needs it, or it would run that sample on to the cap).
  for (LiveArm& arm : arms) {
    for (const auto id : arm.loop->buffer()) {
      auto& lengths = arm.lengths[id];
      for (const auto& smp : arm.loop->group_samples(id)) lengths.push_back(smp.finished ? smp.generated_tok : kUnfinishedSample);
    }
  }
  if (profiler) {
    report.profile = profiler->profile();
    // Slice s ran after every policy's step s: a step lies between slices s - 1 and s.
    const auto slow = studies::slice_slowdowns(*report.profile);
    for (std::int64_t s = 0; s < steps; ++s) {
      std::vector<double> near;
      for (const std::int64_t k : {s - 1, s}) {
        if (k >= 0 && k < static_cast<std::int64_t>(slow.size()) && slow[static_cast<std::size_t>(k)]) {
          near.push_back(*slow[static_cast<std::size_t>(k)]);
        }
      }
      report.machine_slowdown_by_step.push_back(near.empty() ? std::nullopt : std::optional<double>((near.front() + near.back()) / 2));
    }
  }
  report.calibration = report.profile ? studies::calibrate(*report.profile) : *calibration;
  report.profiled_interleaved = profiler != nullptr;
  profiler.reset();
  for (std::size_t i = 0; i < arms.size(); ++i) {
    PolicyValidation& pv = report.policies[i];
    const std::string& name = pv.policy;
    const base::Config twin = simulator_twin(scenario, report.calibration, pv.overlapped);
    const auto drawn = arms[i].workload->next_index();
    pv.trace = live_trace(arms[i].lengths, drawn, n, cap, LiveTraceUse::kWhatIf, dataset_prompts);
    // The simulator twin on the same lengths, with the same kind of policy.
    auto sim_backend = scenario::make_sim_backend(twin, scenario::resolve_scenario(twin), true, true);
    auto sim_policy = registry.get(name).make(twin);
    traces::TraceReplay replay(live_trace(arms[i].lengths, drawn, n, cap, LiveTraceUse::kTwin, dataset_prompts), "live " + name);
    const auto sim_loop = rl::make_loop(twin, *sim_backend, *sim_policy, replay, 1);  // the live run's one device
    for (std::int64_t s = 0; s < steps; ++s) pv.sim.push_back(sim_loop->run_step());
    pv.sim_engine_changes = sim_backend->timeline();
    pv.sim_engine_windows = sim_backend->windows();
    const auto warm = static_cast<std::size_t>(std::min<std::int64_t>(warmup_steps, static_cast<std::int64_t>(pv.live.size())));
    for (std::size_t s = 0; s < warm; ++s) {
      if (pv.sim[s].step_time_s > 0) pv.warmup_live_over_sim.push_back(pv.live[s].step_time_s / pv.sim[s].step_time_s);
    }
    std::vector<double> drift_adjusted;
    for (std::size_t s = warm; s < pv.live.size(); ++s) {
      // Colocated, the rollout phase (train and sync are timed apart); overlapped, the whole step.
      const double meas = pv.overlapped ? pv.live[s].step_time_s : pv.live[s].rollout_time_s;
      const double pred = pv.overlapped ? pv.sim[s].step_time_s : pv.sim[s].rollout_time_s;
      // A step whose batch was complete in the buffer takes no rollout time:
      // no relative error there; it counts as agreeing when both are instant.
      if (meas < kInstantS) {
        ++pv.instant_steps;
        if (pred < kInstantS) ++pv.instant_agree;
        continue;
      }
      pv.step_rollout_error.push_back(std::fabs(pred - meas) / meas);
      if (s < report.machine_slowdown_by_step.size() && report.machine_slowdown_by_step[s]) {
        drift_adjusted.push_back(std::fabs(pred * *report.machine_slowdown_by_step[s] - meas) / meas);
      }
    }
    if (!drift_adjusted.empty()) pv.median_error_drift_adjusted = base::sample_quantile(drift_adjusted, 0.5);
    for (std::size_t s = 0; s < pv.live.size(); ++s) {
      if (pv.live[s].tokens_generated == pv.sim[s].tokens_generated) ++pv.steps_same_tokens;
    }
    pv.median_error = base::sample_quantile(pv.step_rollout_error, 0.5);
    pv.p90_error = base::sample_quantile(pv.step_rollout_error, 0.9);
    const auto after_warmup = [warm](const std::vector<rl::StepMetrics>& v) {
      return std::vector<rl::StepMetrics>(v.begin() + static_cast<std::ptrdiff_t>(std::min(warm, v.size())), v.end());
    };
    const auto lt = rl::derive(rl::summarize(after_warmup(pv.live)).totals);
    const auto st = rl::derive(rl::summarize(after_warmup(pv.sim)).totals);
    pv.total_time_error = lt.total_time_s > 0 ? (st.total_time_s - lt.total_time_s) / lt.total_time_s : 0.0;
    pv.live_rollout_tok_s = lt.rollout_throughput_tok_s;
    pv.sim_rollout_tok_s = st.rollout_throughput_tok_s;
    pv.live_effective_tok_s = lt.effective_throughput_tok_s;
    pv.sim_effective_tok_s = st.effective_throughput_tok_s;
    if (pv.overlapped) {
      struct Side {
        std::vector<double> ratios;
        double time_s = 0, predicted_s = 0;
      } beside, alone;
      for (std::size_t s = warm; s < pv.live_iterations.size(); ++s) {
        for (const auto& it : pv.live_iterations[s]) {
          const double pred = studies::predicted_iteration_s(report.calibration, it);
          if (pred <= 0) continue;
          Side& side = it.beside_train ? beside : alone;
          side.ratios.push_back(it.time_s / pred);
          side.time_s += it.time_s;
          side.predicted_s += pred;
        }
      }
      if (!beside.ratios.empty()) {
        pv.iteration_ratio_beside_train = base::sample_quantile(beside.ratios, 0.5);
        pv.iteration_sum_ratio_beside_train = beside.time_s / beside.predicted_s;
      }
      if (!alone.ratios.empty()) {
        pv.iteration_ratio_alone = base::sample_quantile(alone.ratios, 0.5);
        pv.iteration_sum_ratio_alone = alone.time_s / alone.predicted_s;
      }
    }
    train_step_ratios(pv, report.calibration, warm);
  }
  for (auto& pv : report.policies) {
    for (const auto& sync : report.policies) {
      if (sync.policy != "sync" || &sync == &pv || sync.live_effective_tok_s <= 0 || sync.sim_effective_tok_s <= 0) continue;
      pv.effective_gain_measured = pv.live_effective_tok_s / sync.live_effective_tok_s - 1.0;
      pv.effective_gain_predicted = pv.sim_effective_tok_s / sync.sim_effective_tok_s - 1.0;
      pv.effective_gain_error_interval =
          studies::gain_error_interval(pv.live, pv.sim, sync.live, sync.sim, static_cast<std::size_t>(warmup_steps),
                                       static_cast<std::uint64_t>(scenario.get(base::keys::kSeed)));
    }
  }
  report.warmup_steps = warmup_steps;
  const PolicyValidation* sync = nullptr;
  const PolicyValidation* other = nullptr;
  for (const auto& p : report.policies) {
    if (p.policy == "sync")
      sync = &p;
    else if (!other)
      other = &p;
  }
  if (sync && other && sync->live_rollout_tok_s > 0 && sync->sim_rollout_tok_s > 0) {
    report.gain_measured = other->live_rollout_tok_s / sync->live_rollout_tok_s - 1.0;
    report.gain_predicted = other->sim_rollout_tok_s / sync->sim_rollout_tok_s - 1.0;
  }
  return report;
}

nlohmann::json ValidationReport::to_json() const {
  nlohmann::json j;
  j["policies"] = nlohmann::json::object();
  for (const auto& p : policies) {
    nlohmann::json pj;
    pj["steps"] = p.live.size();
    pj["instant_steps"] = p.instant_steps;
    pj["instant_steps_predicted"] = p.instant_agree;
    pj["median_step_rollout_error"] = p.median_error;
    pj["p90_step_rollout_error"] = p.p90_error;
    pj["median_step_error_drift_adjusted"] =
        p.median_error_drift_adjusted ? nlohmann::json(*p.median_error_drift_adjusted) : nlohmann::json(nullptr);
    pj["total_time_error"] = p.total_time_error;
    pj["live_rollout_throughput_tok_s"] = p.live_rollout_tok_s;
    pj["sim_rollout_throughput_tok_s"] = p.sim_rollout_tok_s;
    pj["steps_same_tokens"] = p.steps_same_tokens;
    pj["warmup_live_over_sim"] = p.warmup_live_over_sim;
    pj["overlapped"] = p.overlapped;
    pj["compared_time"] = p.overlapped ? "step_time_s" : "rollout_time_s";
    pj["live_effective_throughput_tok_s"] = p.live_effective_tok_s;
    pj["sim_effective_throughput_tok_s"] = p.sim_effective_tok_s;
    const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    pj["effective_gain_measured"] = opt(p.effective_gain_measured);
    pj["effective_gain_predicted"] = opt(p.effective_gain_predicted);
    pj["effective_gain_error_pp"] = p.effective_gain_measured && p.effective_gain_predicted
                                        ? nlohmann::json(100.0 * (*p.effective_gain_predicted - *p.effective_gain_measured))
                                        : nlohmann::json(nullptr);
    pj["effective_gain_error_ci95_pp"] =
        p.effective_gain_error_interval
            ? nlohmann::json::array({p.effective_gain_error_interval->lo_pp, p.effective_gain_error_interval->hi_pp})
            : nlohmann::json(nullptr);
    pj["iteration_time_ratio_beside_train"] = opt(p.iteration_ratio_beside_train);
    pj["iteration_time_ratio_alone"] = opt(p.iteration_ratio_alone);
    pj["iteration_time_sum_ratio_beside_train"] = opt(p.iteration_sum_ratio_beside_train);
    pj["iteration_time_sum_ratio_alone"] = opt(p.iteration_sum_ratio_alone);
    pj["train_time_ratio"] = opt(p.train_ratio);
    pj["train_slowdown_implied"] = opt(p.train_slowdown_implied);
    pj["train_beside_engine_share"] = p.train_beside_engine_share;
    for (const auto& [side, steps] : {std::pair{"live", &p.live}, std::pair{"sim", &p.sim}}) {
      auto& times = pj[fmt::format("{}_rollout_time_s", side)] = nlohmann::json::array();
      auto& step_times = pj[fmt::format("{}_step_time_s", side)] = nlohmann::json::array();
      auto& tokens = pj[fmt::format("{}_tokens_generated", side)] = nlohmann::json::array();
      // Where a step's time went, per step: what a gap between the sides is made of.
      auto& train_times = pj[fmt::format("{}_train_time_s", side)] = nlohmann::json::array();
      auto& sync_times = pj[fmt::format("{}_sync_time_s", side)] = nlohmann::json::array();
      auto& trained = pj[fmt::format("{}_tokens_trained", side)] = nlohmann::json::array();
      for (const auto& m : *steps) {
        times.push_back(m.rollout_time_s);
        step_times.push_back(m.step_time_s);
        tokens.push_back(m.tokens_generated);
        train_times.push_back(m.train_time_s);
        sync_times.push_back(m.sync_time_s);
        trained.push_back(m.tokens_trained);
      }
    }
    j["policies"][p.policy] = pj;
  }
  j["warmup_steps"] = warmup_steps;
  j["machine_slowdown_by_step"] = nlohmann::json::array();
  for (const auto& m : machine_slowdown_by_step) j["machine_slowdown_by_step"].push_back(m ? nlohmann::json(*m) : nlohmann::json(nullptr));
  j["gain_measured"] = gain_measured ? nlohmann::json(*gain_measured) : nlohmann::json(nullptr);
  j["gain_predicted"] = gain_predicted ? nlohmann::json(*gain_predicted) : nlohmann::json(nullptr);
  j["gain_error_pp"] =
      gain_measured && gain_predicted ? nlohmann::json(100.0 * (*gain_predicted - *gain_measured)) : nlohmann::json(nullptr);
  return j;
}

}  // namespace april::studies
