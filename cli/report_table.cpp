#include "cli/report_table.hpp"

#include "sim/cluster_shape.hpp"
#include "sim/engine_knobs.hpp"
#include "sim/train_sync_knobs.hpp"

#include <fmt/format.h>

namespace april::cli {

void print_scenario_header(const base::Config& c, const std::string& scenario, const std::string& trace) {
  const auto shape = sim::cluster_shape(c);
  const std::string cluster = shape.disaggregated()
                                  ? fmt::format("{} rollout GPUs ({} engines at TP {}) + {} train GPUs", shape.rollout_gpus, shape.engines,
                                                shape.tensor_parallel, shape.train_gpus)
                                  : fmt::format("{} engines at TP {}", shape.engines, shape.tensor_parallel);
  fmt::print("scenario {}: {} on {} x{}, {}, B = {} groups x n = {}, max response {} tok, {} steps, seed {}\n", scenario,
             c.get_string("model"), c.get_string("hardware"), shape.gpus, cluster, c.get_int("rollout_batch_size"),
             c.get_int("n_samples_per_prompt"), c.get_int("max_response_len"), c.get_int("steps"), c.get_int("seed"));
  fmt::print("engine: {}; KV capacity {} tok/engine, running cap {}\n", sim::make_iteration_model(c)->describe(),
             sim::kv_capacity_tok(c), c.get_int("engine.max_running") == 0 ? std::string("none") : std::to_string(c.get_int("engine.max_running")));
  fmt::print("weight sync: {}\n", sim::weight_sync(c).how);
  fmt::print("workload: {}\n\n", trace.empty() ? "long-tail generator (see `april keys`, workload.*)" : "trace " + trace);
}

void print_report_table(const std::vector<scenario::RunResult>& results) {
  double sync_tput = 0;
  for (const auto& r : results) {
    if (r.policy == "sync") sync_tput = rl::derive(r.summary.totals).rollout_throughput_tok_s;
  }
  fmt::print("{:<12} {:>10} {:>8} {:>8} {:>9} {:>7} {:>6} {:>6} {:>5} {:>6} {:>9} {:>12}\n", "policy", "rollout", "speedup",
             "rollout", "total", "off-", "stale", "stale", "busy", "slots", "wasted", "buffer peak");
  fmt::print("{:<12} {:>10} {:>8} {:>8} {:>9} {:>7} {:>6} {:>6} {:>5} {:>6} {:>9} {:>12}\n", "", "tok/s", "vs sync", "s/step",
             "time s", "policy", "mean", "max", "", "filled", "tok", "groups/Mtok");
  for (const auto& r : results) {
    const auto& t = r.summary.totals;
    const auto d = rl::derive(t);
    const std::string speedup = sync_tput > 0 ? fmt::format("{:.3f}x", d.rollout_throughput_tok_s / sync_tput) : "-";
    const std::string slots = d.slot_occupancy >= 0 ? fmt::format("{:.0f}%", 100.0 * d.slot_occupancy) : "-";
    fmt::print("{:<12} {:>10.0f} {:>8} {:>8.2f} {:>9.1f} {:>6.1f}% {:>6.2f} {:>6} {:>4.0f}% {:>6} {:>9} {:>5}/{:<6.2f}\n", r.policy,
               d.rollout_throughput_tok_s, speedup, t.rollout_time_s / static_cast<double>(std::max<std::int64_t>(1, r.summary.steps)),
               d.total_time_s, 100.0 * d.offpolicy_token_fraction, d.staleness_mean, t.staleness_max,
               100.0 * d.engine_busy_fraction, slots, t.tokens_wasted, r.summary.buffer_peak_groups,
               static_cast<double>(r.summary.buffer_peak_tokens) / 1e6);
  }
  fmt::print("\nrollout tok/s = decoded tokens (aborted ones too) / rollout time; busy = engine time with an iteration running;\n"
             "slots filled = mean running requests / running cap. Under sync the long tail shows as few filled slots: the engines\n"
             "keep iterating on a handful of long samples while the rest of the batch is done.\n");
}

}  // namespace april::cli
