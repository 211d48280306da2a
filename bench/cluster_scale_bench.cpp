// The simulator's cost per completed sample as the cluster grows: the
// `april` policy, 20 steps, B = 4 groups per GPU x n = 16 samples, one engine
// per 2 GPUs (TP 2), at 64, 512, 2,048 and 4,096 GPUs, then the same at 4x the
// default max response length. Prints wall time, events, cost per completed
// sample and peak RSS per row, and the ratio of the largest to the smallest
// per-sample cost, all measured in this one run (the machine is shared: compare
// ratios, not seconds across runs). Each row runs --repeats times (3 by
// default), each time in a fresh process, and reports its fastest run with
// the slowest beside it: on a shared machine a neighbour's burst slows a run,
// never speeds one, so the fastest is the closest to the simulator's own cost.
// Run: build/bench/april_cluster_scale_bench [--max-gpus N] [--steps S] [--repeats R]
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/heap_retention.hpp"
#include "base/huge_page_heap.hpp"
#include "policies/registry.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation.hpp"

namespace {

// Peak resident set of this process, in MiB: each row runs in its own child
// process (run_row_apart), so the figure is that row's alone.
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

struct Row {
  std::int64_t gpus = 0, max_response_tok = 0;
  double wall_s = 0, per_sample_us = 0, rss_mib = 0;
  std::int64_t events = 0, samples = 0;
  double slowest_per_sample_us = 0;  // of the row's repeats
};

Row run_row(const april::policies::PolicyRegistry& registry, const april::base::ConfigSchema& schema, std::int64_t gpus,
            std::int64_t max_response_tok, std::int64_t steps) {
  april::base::Config c(schema);
  april::scenario::apply_scenario(c, "default");
  c.set("cluster.gpus", gpus, "bench");
  c.set("cluster.tensor_parallel", std::int64_t{2}, "bench");
  c.set("cluster.engines", gpus / 2, "bench");
  c.set("rollout_batch_size", 4 * gpus, "bench");
  c.set("n_samples_per_prompt", std::int64_t{16}, "bench");
  c.set("max_response_len", max_response_tok, "bench");
  c.set("steps", steps, "bench");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = april::scenario::simulate(c, registry, "april");
  Row row;
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  row.gpus = gpus;
  row.max_response_tok = max_response_tok;
  row.events = r.events;
  // Completed samples: the ones trained (B x n per step).
  row.samples = steps * 4 * gpus * 16;
  row.per_sample_us = row.wall_s * 1e6 / static_cast<double>(row.samples);
  row.rss_mib = peak_rss_mib();
  return row;
}

// Runs the row in a forked child and reads its figures back through a pipe.
Row run_row_apart(const april::policies::PolicyRegistry& registry, const april::base::ConfigSchema& schema, std::int64_t gpus,
                  std::int64_t max_response_tok, std::int64_t steps) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    const Row row = run_row(registry, schema, gpus, max_response_tok, steps);
    const bool ok = write(fds[1], &row, sizeof row) == static_cast<ssize_t>(sizeof row);
    close(fds[1]);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  Row row;
  const bool got = read(fds[0], &row, sizeof row) == static_cast<ssize_t>(sizeof row);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("the {}-GPU row failed in its child process", gpus));
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  // As `april` runs: the heap on transparent huge pages (base/huge_page_heap.hpp).
  april::base::reexec_with_huge_page_heap(argv);
  april::base::retain_freed_heap();  // kept between steps (base/heap_retention.hpp)
  std::int64_t max_gpus = 4096, steps = 20, repeats = 3;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const std::int64_t value = i + 1 < argc ? std::atoll(argv[i + 1]) : 0;
    if (flag == "--max-gpus" && value > 0)
      max_gpus = value;
    else if (flag == "--steps" && value > 0)
      steps = value;
    else if (flag == "--repeats" && value > 0)
      repeats = value;
    else {
      fmt::print(stderr, "usage: {} [--max-gpus N] [--steps S] [--repeats R] (each a positive integer)\n", argv[0]);
      return 2;
    }
  }
  const auto registry = april::policies::builtin_policies();
  const auto schema = april::scenario::make_schema(registry);
  std::vector<Row> rows;
  for (const std::int64_t response : {std::int64_t{16384}, std::int64_t{4 * 16384}}) {
    for (const std::int64_t gpus : {64, 512, 2048, 4096}) {
      if (gpus > max_gpus) continue;
      Row fastest;
      double slowest_us = 0;
      for (std::int64_t k = 0; k < repeats; ++k) {
        const Row run = run_row_apart(registry, schema, gpus, response, steps);
        if (k == 0 || run.per_sample_us < fastest.per_sample_us) fastest = run;
        slowest_us = std::max(slowest_us, run.per_sample_us);
      }
      fastest.slowest_per_sample_us = slowest_us;
      rows.push_back(fastest);
      const auto& r = rows.back();
      fmt::print(
          "{:>5} GPUs  max response {:>6} tok  {:>8.2f} s  {:>11} events  {:>9} samples  {:>6.3f} us/sample  "
          "(slowest of {}: {:.3f})  peak RSS {:>7.1f} MiB\n",
          r.gpus, r.max_response_tok, r.wall_s, r.events, r.samples, r.per_sample_us, repeats, r.slowest_per_sample_us, r.rss_mib);
      std::fflush(stdout);
    }
  }
  if (rows.empty()) return 0;
  const auto [lo, hi] =
      std::minmax_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.per_sample_us < b.per_sample_us; });
  fmt::print(
      "per completed sample (each row's fastest of {}): smallest {:.3f} us ({} GPUs), largest {:.3f} us ({} GPUs); "
      "largest / smallest = {:.2f}\n",
      repeats, lo->per_sample_us, lo->gpus, hi->per_sample_us, hi->gpus, hi->per_sample_us / lo->per_sample_us);
  return 0;
}
