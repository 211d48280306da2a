#include "cli/report_table.hpp"

#include "base/run_keys.hpp"
#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace april::cli {

void print_scenario_header(const base::Config& c, const scenario::ResolvedScenario& resolved, const std::string& scenario,
                           const std::string& trace) {
  const auto& shape = resolved.shape;
  const std::string cluster = shape.disaggregated()
                                  ? fmt::format("{} rollout GPUs ({} engines at TP {}) + {} train GPUs", shape.rollout_gpus, shape.engines,
                                                shape.tensor_parallel, shape.train_gpus)
                                  : fmt::format("{} engines at TP {}", shape.engines, shape.tensor_parallel);
  const std::string hardware = sim::describe_hardware(c);
  fmt::print("scenario {}: {} on {} x{}, {}, B = {} groups x n = {}, max response {} tok, {} steps, seed {}\n", scenario,
             c.get(sim::keys::kModel), hardware, shape.gpus, cluster, c.get(base::keys::kRolloutBatchSize),
             c.get(base::keys::kSamplesPerPrompt), c.get(base::keys::kMaxResponseLen), c.get(base::keys::kSteps), c.get(base::keys::kSeed));
  fmt::print("engine: {}; KV capacity {} tok/engine, running cap {}\n", sim::make_iteration_model(c, resolved.inputs)->describe(),
             resolved.kv_capacity_tok,
             c.get(sim::keys::kEngineMaxRunning) == 0 ? std::string("none") : std::to_string(c.get(sim::keys::kEngineMaxRunning)));
  if (const auto idle = sim::idle_gpus_note(shape); !idle.empty()) fmt::print("{}\n", idle);
  fmt::print("weight sync: {}\n", resolved.sync.how);
  fmt::print("workload: {}\n\n", trace.empty() ? "long-tail generator (see `april keys`, workload.*)" : "trace " + trace);
}

void print_idle_gpus_note(const base::Config& config, std::set<std::string>& printed) {
  const auto note = sim::idle_gpus_note(sim::cluster_shape(config));
  if (note.empty() || !printed.insert(note).second) return;
  fmt::print("{}\n", note);
}

namespace {

std::string cluster_cell(const sim::ClusterShape& s) {
  return s.disaggregated() ? fmt::format("{}+{}", s.rollout_gpus, s.train_gpus) : fmt::format("{} coloc", s.gpus);
}

std::string ratio_cell(double value, double base) { return base > 0 ? fmt::format("{:.3f}x", value / base) : "-"; }

// The run's wall time as hours:minutes:seconds ("how long will my 1,000 steps take").
std::string clock_cell(double seconds) {
  const auto s = static_cast<std::int64_t>(std::llround(std::max(0.0, seconds)));
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

void print_report_table(const std::vector<ReportRow>& rows) {
  // The baseline: sync on the first cluster it ran on.
  double sync_rollout = 0, sync_effective = 0;
  for (const auto& row : rows) {
    if (row.run.policy != "sync" || sync_rollout > 0) continue;
    const auto d = rl::derive(row.run.summary.totals);
    sync_rollout = d.rollout_throughput_tok_s;
    sync_effective = d.effective_throughput_tok_s;
  }
  std::size_t policy_w = 6;
  for (const auto& row : rows) policy_w = std::max(policy_w, row.run.policy.size());
  const auto line = [&](const auto&... cells) {
    fmt::print("{:<{}} {:>8} {:>7} {:>8} {:>6} {:>9} {:>7} {:>9} {:>7} {:>6} {:>7} {:>5} {:>5} {:>6} {:>7} {:>8} {:>12}\n", cells...);
  };
  line("policy", policy_w, "GPUs", "step", "run", "GPU-h", "effective", "", "rollout", "", "off-", "APRIL", "stale", "stale", "engine",
       "trainer", "wasted", "buffer peak");
  line("", policy_w, "", "s", "h:mm:ss", "run", "tok/s", "vs sync", "tok/s", "vs sync", "policy", "off-pol", "mean", "max", "busy", "busy",
       "tok", "groups/Mtok");
  for (const auto& row : rows) {
    const auto& r = row.run;
    const auto& t = r.summary.totals;
    const auto d = rl::derive(t);
    const double steps = static_cast<double>(std::max<std::int64_t>(1, r.summary.steps));
    const double step_s = d.total_time_s / steps;
    line(r.policy, policy_w, cluster_cell(row.shape), fmt::format("{:.2f}", step_s), clock_cell(d.total_time_s),
         fmt::format("{:.1f}", d.gpu_hours), fmt::format("{:.0f}", d.effective_throughput_tok_s),
         ratio_cell(d.effective_throughput_tok_s, sync_effective), fmt::format("{:.0f}", d.rollout_throughput_tok_s),
         ratio_cell(d.rollout_throughput_tok_s, sync_rollout), fmt::format("{:.1f}%", 100.0 * d.offpolicy_token_fraction),
         fmt::format("{:.1f}%", 100.0 * r.summary.april_offpolicy_ratio), fmt::format("{:.2f}", d.staleness_mean), t.staleness_max,
         fmt::format("{:.0f}%", 100.0 * d.engine_busy_fraction), fmt::format("{:.0f}%", 100.0 * d.trainer_busy_fraction), t.tokens_wasted,
         fmt::format("{}/{:.2f}", r.summary.buffer_peak_groups, static_cast<double>(r.summary.buffer_peak_tokens) / 1e6));
  }
  // The answer the table is read for: the most trained tokens per second, the
  // figure comparable across designs, with the staleness it costs.
  if (rows.size() > 1) {
    const ReportRow* best = nullptr;
    double best_tok_s = -1;
    for (const auto& row : rows) {
      const double tok_s = rl::derive(row.run.summary.totals).effective_throughput_tok_s;
      if (tok_s > best_tok_s) best = &row, best_tok_s = tok_s;
    }
    const auto d = rl::derive(best->run.summary.totals);
    const std::string versus =
        sync_effective > 0 ? fmt::format(" ({} sync's effective tok/s)", ratio_cell(best_tok_s, sync_effective)) : "";
    fmt::print("\nmost effective: {}{}, {:.1f}% of its trained tokens off-policy, staleness up to {} version{}\n", best->run.policy, versus,
               100.0 * d.offpolicy_token_fraction, best->run.summary.totals.staleness_max,
               best->run.summary.totals.staleness_max == 1 ? "" : "s");
  }
  fmt::print(
      "\nGPUs: N coloc = rollout, train and sync take turns on all N; R+T = R rollout GPUs and T train GPUs working at\n"
      "the same time. run = wall time of all steps; GPU-h run = GPUs x run. effective tok/s = trained tokens / wall time,\n"
      "the figure comparable across designs; rollout tok/s = decoded tokens (aborted ones too) / rollout time;\n"
      "off-policy = share of trained tokens from an older version; APRIL off-pol = the APRIL reference's logged\n"
      "off_policy_ratio, resumed samples' last-segment tokens / (decoded + those), mean over steps; engine busy = engine\n"
      "time with an iteration running; trainer busy = share of the wall time spent training.\n");
  for (const auto& row : rows) {
    if (row.split_trials.empty()) continue;
    std::vector<std::string> tried;
    for (const auto& tr : row.split_trials) tried.push_back(fmt::format("{}+{} {:.2f}", tr.rollout_gpus, tr.train_gpus, tr.step_time_s));
    fmt::print("{} overlaps rollout and training, so it runs on the split with the least s/step (this seed): {}\n", row.run.policy,
               fmt::join(tried, ", "));
  }
}

}  // namespace april::cli
