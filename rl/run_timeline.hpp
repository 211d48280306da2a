#pragma once
// A run as a timeline in Chrome's trace-event format (base/chrome_trace.hpp),
// for Perfetto: per run, a process "<label>: RL loop" with tracks for the
// rollout (each step's collection of its batch, and the abort that ends it),
// the trainer (each train step, its phases as args) and the weight sync, an
// instant at each step's end carrying its metrics; and a process
// "<label>: engines" with a track per engine (busy spans: an iteration
// running) and, at the finer detail, a counter of its running requests at
// every change. Built from what every backend reports (StepMetrics, and the
// engines' running counts where the backend records them), so a simulated
// run and a live one draw alike.
#include <cstdint>
#include <string>
#include <vector>

#include "base/chrome_trace.hpp"
#include "rl/step_metrics.hpp"

namespace april::rl {

// One engine's running or queued requests changed at `time_ns` (integer ns
// of the run's clock); its KV cache's resident tokens at that instant.
struct EngineRunningChange {
  std::int64_t time_ns = 0;
  std::int64_t engine = 0;
  std::int64_t running = 0;
  std::int64_t waiting = 0;
  std::int64_t kv_tok = 0;
};

// One engine's window of iterations over one batch, from `start_ns` to
// `end_ns`: a prefill iteration (prefill_tok > 0) or decode iterations run as
// one (sim::EngineWindow).
struct EngineWindowSpan {
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t engine = 0;
  std::int64_t iterations = 0;
  std::int64_t batch = 0;
  std::int64_t kv_tok = 0;
  std::int64_t prefill_tok = 0;
  std::int64_t prefill_requests = 0;
  bool aborted = false;
};

enum class TimelineDetail {
  // Step phases, train steps, syncs and engine busy spans: a few events per
  // engine and step (about 100 bytes each).
  kSteps,
  // Also counters of each engine's running and queued requests and its KV
  // cache's tokens at every change: two events per request admitted or
  // finished.
  kChanges,
  // Also each engine's windows in place of its busy spans: a "prefill" span
  // per iteration that admits (its prefill tokens and requests as args) and
  // a "decode" span per stretch of decode iterations over one batch (its
  // batch, iterations and KV tokens), so idle gaps and the pauses of a sync
  // show; about one window per request admitted or finished.
  kWindows,
};
TimelineDetail parse_timeline_detail(const std::string& text);  // "steps" | "changes" | "windows"; throws std::invalid_argument

struct RunTimeline {
  std::string label;  // the run's name in the track titles ("april")
  std::int64_t engines = 0;
  const std::vector<StepMetrics>* steps = nullptr;
  const std::vector<EngineRunningChange>* engine_changes = nullptr;  // may be null: no engine tracks
  // Subtracted from every time, so that runs on different clocks (a live run
  // after its warm start, its simulator twin from zero) start together.
  double clock_origin_s = 0;
  const std::vector<EngineWindowSpan>* engine_windows = nullptr;  // drawn at TimelineDetail::kWindows; may be null
  double sync_bytes = 0;                                          // the weights one sync pushes, an arg of its spans; 0: not known
  // Engines on the trainer's GPUs (elastic splits), numbered after `engines`.
  std::int64_t hybrid_engines = 0;
};

// Adds `run` to `trace` as processes `pid_base` (RL loop) and `pid_base + 1`
// (engines), sorted after earlier runs. Each weight sync is drawn on both
// sides: the loop's sync track and, with engine tracks, a track of the
// engines receiving it.
void add_run_timeline(base::ChromeTrace& trace, const RunTimeline& run, std::int64_t pid_base, TimelineDetail detail);

// The steps laid end to end: the time between one step's end (its sync's)
// and the next one's start, when the clock ran on for other work (april
// validate's other policies and profile slices take turns with each live
// run), taken out of every later time.
std::vector<StepMetrics> without_gaps_between_steps(const std::vector<StepMetrics>& steps);

// The same run's engine records moved as its steps are by
// without_gaps_between_steps(steps): a record from a step's start to the
// next one's moves by the gaps before that step; one inside a gap (the
// clock ran on while the engine waited) moves to the gap's start.
void remove_gaps_between_steps(const std::vector<StepMetrics>& steps, std::vector<EngineRunningChange>& changes,
                               std::vector<EngineWindowSpan>& windows);

// Seconds of the run's clock as integer nanoseconds (the clock counts whole
// nanoseconds; the metrics carry them as seconds).
std::int64_t seconds_to_ns(double s);

}  // namespace april::rl
