// What the first train step at a new, larger batch shape costs against the
// same step once its memory is in place. A live run meets its shapes in the
// order its lengths come: the step whose padded batch is the largest so far
// grows the heap, and each page it touches for the first time is faulted in
// (in this virtual machine, at a high price). The profiler times warm steps.
// The bench runs shapes of growing padded length, each twice (cold, then
// warm), and prints the time and minor page faults of both, for a fresh
// trainer per round. The heap stays grown from one round to the next
// (configure_runtime never trims), so round 0 shows a cold process and
// the later rounds a heap already grown. With `prewarm`, one untimed step of
// the largest shape runs before round 0.
// usage: april_live_trainer_cold_bench [SIZE] [SAMPLES] [ROUNDS] [none|prewarm]   (default: small 64 1 none)
#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "bench/live_train_batch.hpp"
#include "tasks/countdown_task.hpp"

namespace {

using april::live::CountdownTask;
using april::live::TrainSampleData;

struct Timed {
  double s = 0;
  long faults = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::int64_t samples = argc > 2 ? std::atoll(argv[2]) : 64;
  const std::int64_t rounds = argc > 3 ? std::atoll(argv[3]) : 1;
  const std::string mode = argc > 4 ? argv[4] : "none";
  if (samples < 1 || rounds < 1 || (mode != "none" && mode != "prewarm")) {
    fmt::print(stderr, "usage: april_live_trainer_cold_bench [SIZE] [SAMPLES >= 1] [ROUNDS >= 1] [none|prewarm]\n");
    return 2;
  }
  april::live::configure_runtime(1);
  const torch::Device cpu(torch::kCPU);
  const CountdownTask task(april::live::CountdownParams{}, 1);
  const std::vector<std::int64_t> shapes{8, 16, 24, 32, 40, 48};
  const auto cfg = april::live::model_config(size, task.vocab(), task.max_prompt_tok() + 64);
  fmt::print("model {}, {} samples, padded response length growing {}..{}, {} round(s), before the first shape: {}\n", size, samples,
             shapes.front(), shapes.back(), rounds, mode);
  fmt::print("{:>8} {:>10} {:>10} {:>12} {:>12} {:>10}\n", "longest", "cold s", "warm s", "cold faults", "warm faults", "cold/warm");
  for (std::int64_t r = 0; r < rounds; ++r) {
    april::live::GrpoTrainer trainer(april::live::Transformer(cfg), std::nullopt, april::live::GrpoOptions{}, cpu);
    const auto timed = [&](const std::vector<TrainSampleData>& batch) {
      const long f0 = april::bench::minor_faults();
      const auto t0 = std::chrono::steady_clock::now();
      trainer.step(batch, 0);
      return Timed{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), april::bench::minor_faults() - f0};
    };
    if (mode == "prewarm" && r == 0) (void)timed(april::bench::filler_batch(samples, shapes.back()));
    for (const auto longest : shapes) {
      const auto batch = april::bench::filler_batch(samples, longest);
      const Timed cold = timed(batch);
      const Timed warm = timed(batch);
      fmt::print("{:>8} {:>10.3f} {:>10.3f} {:>12} {:>12} {:>10.2f}\n", longest, cold.s, warm.s, cold.faults, warm.faults, cold.s / warm.s);
    }
  }
  return 0;
}
