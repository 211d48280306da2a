#include "rl/run_timeline.hpp"

#include "rl/metric_columns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace april::rl {

namespace {

// The RL loop's tracks.
constexpr std::int64_t kRolloutTid = 1, kTrainerTid = 2, kSyncTid = 3;

// The step's metrics as steps.csv has them: the one metric table
// (rl/metric_columns.hpp), so a metric added there shows here too.
nlohmann::json step_args(const StepMetrics& m) {
  const DerivedMetrics d = derive(m);
  nlohmann::json a = nlohmann::json::object();
  for (const MetricColumn& c : step_columns()) {
    const auto v = c.value(m, d, nullptr);
    if (!v) continue;
    if (c.integer) {
      a[c.name] = static_cast<std::int64_t>(*v);
    } else {
      a[c.name] = *v;
    }
  }
  return a;
}

nlohmann::json train_args(const StepMetrics& m) {
  // The batch's policy versions: from the trainer's (m.step) back to the stalest token's.
  nlohmann::json a = {{"tokens_trained", m.tokens_trained},
                      {"batch_response_tok", m.batch_response_tok},
                      {"staleness_mean", derive(m).staleness_mean},
                      {"staleness_max", m.staleness_max},
                      {"trainer_version", m.step},
                      {"oldest_version", m.step - m.staleness_max}};
  if (m.train_phases) {
    const TrainPhases& p = *m.train_phases;
    a["old_logprob_s"] = p.old_logprob_s;
    a["ref_logprob_s"] = p.ref_logprob_s;
    a["update_s"] = p.update_s;
    a["grad_reduce_s"] = p.grad_reduce_s;
    a["optimizer_s"] = p.optimizer_s;
    a["offload_s"] = p.offload_s;
    a["other_s"] = p.other_s;
  }
  return a;
}

// A modelled train step's phases inside its span, one after another in the
// order a step runs them (docs/design.md section 7; the update's gradient
// reductions and optimizer steps, interleaved per mini-batch there, after
// it here), scaled to the span: a step slowed beside the engines stretches
// them all alike.
void add_train_phases(base::ChromeTrace& trace, std::int64_t pid, const TrainPhases& p, std::int64_t t0, std::int64_t t1) {
  const std::pair<const char*, double> phases[] = {{"old log-prob", p.old_logprob_s},
                                                   {"reference log-prob", p.ref_logprob_s},
                                                   {"update", p.update_s},
                                                   {"gradient reduction", p.grad_reduce_s},
                                                   {"optimizer", p.optimizer_s},
                                                   {"offload", p.offload_s},
                                                   {"other", p.other_s}};
  double total = 0;
  for (const auto& [name, s] : phases) total += s;
  if (!(total > 0)) return;
  double done = 0;
  std::int64_t at = t0;
  for (const auto& [name, s] : phases) {
    if (!(s > 0)) continue;
    done += s;
    const std::int64_t end = t0 + std::llround(static_cast<double>(t1 - t0) * std::min(1.0, done / total));
    trace.span(pid, kTrainerTid, name, at, end, {{"modelled_s", s}});
    at = end;
  }
}

nlohmann::json sync_args(const RunTimeline& run, const StepMetrics& m) {
  nlohmann::json a = {{"version", m.step + 1}};
  if (run.sync_bytes > 0) a["bytes"] = std::llround(run.sync_bytes);
  return a;
}

}  // namespace

TimelineDetail parse_timeline_detail(const std::string& text) {
  if (text == "steps") return TimelineDetail::kSteps;
  if (text == "changes") return TimelineDetail::kChanges;
  if (text == "windows") return TimelineDetail::kWindows;
  throw std::invalid_argument(fmt::format("--timeline-detail '{}': expected steps, changes or windows", text));
}

std::int64_t seconds_to_ns(double s) { return std::llround(s * 1e9); }

std::vector<StepMetrics> without_gaps_between_steps(const std::vector<StepMetrics>& steps) {
  std::vector<StepMetrics> out = steps;
  double removed_s = 0, previous_end_s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    StepMetrics& m = out[i];
    if (i > 0 && m.start_time_s > previous_end_s) removed_s += m.start_time_s - previous_end_s;
    previous_end_s = m.sync_end_s;
    for (double* t : {&m.start_time_s, &m.batch_ready_s, &m.train_start_s, &m.train_end_s, &m.sync_end_s}) {
      if (*t > 0) *t -= removed_s;
    }
  }
  return out;
}

void remove_gaps_between_steps(const std::vector<StepMetrics>& steps, std::vector<EngineRunningChange>& changes,
                               std::vector<EngineWindowSpan>& windows) {
  // Per step: its start, the time removed before it, and its end (its sync's), in ns.
  struct Stretch {
    std::int64_t start_ns, removed_ns, end_ns;
  };
  std::vector<Stretch> stretches;
  std::int64_t removed = 0, previous_end = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::int64_t start = seconds_to_ns(steps[i].start_time_s);
    if (i > 0 && start > previous_end) removed += start - previous_end;
    previous_end = std::max(start, seconds_to_ns(steps[i].sync_end_s));
    stretches.push_back({start, removed, previous_end});
  }
  const auto moved = [&stretches](std::int64_t t) {
    // The last step that started at or before t.
    const auto it =
        std::upper_bound(stretches.begin(), stretches.end(), t, [](std::int64_t v, const Stretch& st) { return v < st.start_ns; });
    if (it == stretches.begin()) return t;
    const Stretch& st = *(it - 1);
    return std::min(t, st.end_ns) - st.removed_ns;
  };
  for (auto& c : changes) c.time_ns = moved(c.time_ns);
  for (auto& w : windows) {
    w.start_ns = moved(w.start_ns);
    w.end_ns = std::max(w.start_ns, moved(w.end_ns));
  }
}

void add_run_timeline(base::ChromeTrace& trace, const RunTimeline& run, std::int64_t pid_base, TimelineDetail detail) {
  const std::int64_t loop_pid = pid_base, engines_pid = pid_base + 1;
  const std::int64_t origin = seconds_to_ns(run.clock_origin_s);
  const auto ns = [origin](double s) { return seconds_to_ns(s) - origin; };
  trace.name_process(loop_pid, run.label + ": RL loop", pid_base);
  trace.name_thread(loop_pid, kRolloutTid, "rollout");
  trace.name_thread(loop_pid, kTrainerTid, "trainer");
  trace.name_thread(loop_pid, kSyncTid, "weight sync");
  if (run.steps != nullptr) {
    for (const StepMetrics& m : *run.steps) {
      const std::int64_t start = ns(m.start_time_s), ready = ns(m.batch_ready_s);
      const std::int64_t sync_end = ns(m.sync_end_s), sync_start = ns(m.sync_end_s - m.sync_time_s);
      // The batch's collection: from the step's start to the batch formed.
      trace.span(loop_pid, kRolloutTid, fmt::format("rollout {}", m.step), start, std::max(start, ready),
                 {{"tokens_generated", m.tokens_generated}, {"groups_submitted", m.groups_submitted}});
      if (m.tokens_carried > 0) {
        // APRIL's partials resumed first: their last segments' tokens, admitted at the step's start.
        trace.instant(loop_pid, kRolloutTid, "resumed partials", start, {{"tokens_carried", m.tokens_carried}});
      }
      if (m.abort_time_s > 0) {
        trace.span(loop_pid, kRolloutTid, "abort", ready, ready + seconds_to_ns(m.abort_time_s),
                   {{"groups_aborted", m.groups_aborted}, {"buffer_groups", m.buffer_groups}, {"buffer_tokens", m.buffer_tokens}});
      }
      if (m.train_end_s > m.train_start_s) {
        const std::int64_t t0 = ns(m.train_start_s), t1 = ns(m.train_end_s);
        trace.span(loop_pid, kTrainerTid, fmt::format("train {}", m.step), t0, t1, train_args(m));
        if (m.train_phases) add_train_phases(trace, loop_pid, *m.train_phases, t0, t1);
      }
      if (sync_end > sync_start) {
        trace.span(loop_pid, kSyncTid, fmt::format("sync to version {}", m.step + 1), sync_start, sync_end, sync_args(run, m));
      }
      trace.instant(loop_pid, kRolloutTid, fmt::format("step {} done", m.step), sync_end, step_args(m));
    }
  }
  if (run.engine_changes == nullptr || run.engines <= 0) return;
  trace.name_process(engines_pid, run.label + ": engines", pid_base + 1);
  const std::int64_t all_engines = run.engines + run.hybrid_engines;
  for (std::int64_t e = 0; e < run.engines; ++e) trace.name_thread(engines_pid, e, fmt::format("engine {}", e));
  for (std::int64_t e = run.engines; e < all_engines; ++e) {
    trace.name_thread(engines_pid, e, fmt::format("engine {} (trainer GPUs)", e));
  }
  // The engines' side of each weight sync, one track below them (not one
  // span per engine: the file stays a few events per step).
  const std::int64_t received_tid = all_engines;
  if (run.steps != nullptr) {
    trace.name_thread(engines_pid, received_tid, "weights received");
    for (const StepMetrics& m : *run.steps) {
      const std::int64_t sync_end = ns(m.sync_end_s), sync_start = ns(m.sync_end_s - m.sync_time_s);
      if (sync_end > sync_start) {
        trace.span(engines_pid, received_tid, fmt::format("version {}", m.step + 1), sync_start, sync_end, sync_args(run, m));
      }
    }
  }
  const bool windows = detail == TimelineDetail::kWindows && run.engine_windows != nullptr;
  if (windows) {
    for (const EngineWindowSpan& w : *run.engine_windows) {
      if (w.engine < 0 || w.engine >= all_engines) throw std::logic_error("run timeline: an engine window names no engine");
      nlohmann::json args = {{"batch", w.batch}, {"iterations", w.iterations}, {"kv_tok", w.kv_tok}};
      if (w.prefill_tok > 0) {
        args["prefill_tok"] = w.prefill_tok;
        args["prefill_requests"] = w.prefill_requests;
      }
      if (w.aborted) args["aborted"] = true;
      trace.span(engines_pid, w.engine, w.prefill_tok > 0 ? "prefill" : "decode", w.start_ns - origin, w.end_ns - origin, std::move(args));
    }
  }
  // Busy spans (unless the windows stand for them): from a change away from
  // zero running requests to the change back; the peak in between as an
  // arg. A span still open at the end closes at the last change.
  std::vector<std::int64_t> busy_since(static_cast<std::size_t>(all_engines), -1), peak(static_cast<std::size_t>(all_engines), 0);
  std::int64_t last_ns = 0;
  for (const EngineRunningChange& c : *run.engine_changes) {
    if (c.engine < 0 || c.engine >= all_engines) throw std::logic_error("run timeline: an engine change names no engine");
    const auto e = static_cast<std::size_t>(c.engine);
    const std::int64_t at = c.time_ns - origin;
    last_ns = std::max(last_ns, at);
    if (detail != TimelineDetail::kSteps) {
      trace.counter(engines_pid, fmt::format("requests e{}", c.engine), at, {{"running", c.running}, {"queued", c.waiting}});
      trace.counter(engines_pid, fmt::format("KV tokens e{}", c.engine), at, {{"kv_tok", c.kv_tok}});
    }
    if (windows) continue;
    if (c.running > 0) {
      if (busy_since[e] < 0) busy_since[e] = at;
      peak[e] = std::max(peak[e], c.running);
    } else if (busy_since[e] >= 0) {
      trace.span(engines_pid, c.engine, "busy", busy_since[e], at, {{"peak_running", peak[e]}});
      busy_since[e] = -1;
      peak[e] = 0;
    }
  }
  for (std::int64_t e = 0; e < all_engines && !windows; ++e) {
    const auto i = static_cast<std::size_t>(e);
    if (busy_since[i] >= 0) trace.span(engines_pid, e, "busy", busy_since[i], last_ns, {{"peak_running", peak[i]}});
  }
}

}  // namespace april::rl
