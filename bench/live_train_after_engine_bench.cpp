// What a train step costs right after the engine has run, against the same
// step right after another train step. A colocated live run trains after a
// rollout, and an overlapped one beside it; the profiler's train probes each
// repeat their batch once untimed first (for the heap, see
// live_trainer_cold_bench), so they time the step warm. If the engine's
// iterations leave the trainer's memory cold, the fit to those probes
// predicts every live step low by that much.
// Each round: the batch twice on the trainer's thread (the second timed:
// "after train"), then a rollout of `requests` fresh requests decoded to the
// end, then the batch once more ("after engine"). The rounds alternate in one
// process, so the machine's drift lands on both; the median ratio is printed.
// usage: april_live_train_after_engine_bench [SIZE] [SAMPLES] [ROUNDS] [REQUESTS]   (default: small 64 8 64)
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/grpo.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "adapters/live/detail/worker_thread.hpp"
#include "bench/live_train_batch.hpp"
#include "tasks/countdown_task.hpp"

int main(int argc, char** argv) {
  using april::live::CountdownTask;
  const std::string size = argc > 1 ? argv[1] : "small";
  const std::int64_t samples = argc > 2 ? std::atoll(argv[2]) : 64;
  const std::int64_t rounds = argc > 3 ? std::atoll(argv[3]) : 8;
  const std::int64_t requests = argc > 4 ? std::atoll(argv[4]) : 64;
  if (samples < 1 || rounds < 1 || requests < 1) {
    fmt::print(stderr, "usage: april_live_train_after_engine_bench [SIZE] [SAMPLES >= 1] [ROUNDS >= 1] [REQUESTS >= 1]\n");
    return 2;
  }
  april::live::configure_runtime(1);
  const torch::Device cpu(torch::kCPU);
  const CountdownTask task(april::live::CountdownParams{}, 1);
  const std::int64_t response_tok = 32;
  const auto cfg = april::live::model_config(size, task.vocab(), task.max_prompt_tok() + 64);
  april::live::GrpoTrainer trainer(april::live::Transformer(cfg), std::nullopt, april::live::GrpoOptions{}, cpu);
  april::live::EngineOptions eo;
  eo.slots = std::max<std::int64_t>(requests, 1);
  eo.eos.clear();  // every request decodes its max_new
  eo.exact_prefill = false;
  april::live::KvEngine engine(april::live::Transformer(cfg), eo);
  april::live::WorkerThread worker{[] { torch::set_num_threads(1); }};
  const auto batch = april::bench::filler_batch(samples, response_tok);
  // On the trainer's thread, this one waiting in slices, as a live run trains.
  const auto train_s = [&] {
    auto f = worker.run([&] {
      const auto t0 = std::chrono::steady_clock::now();
      trainer.step(batch, 0);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    april::live::wait_in_slices(f);
    return f.get();
  };
  std::uint64_t key = 0;
  const auto rollout_s = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t k = 0; k < requests; ++k) {
      std::vector<std::int32_t> ctx(static_cast<std::size_t>(task.max_prompt_tok()), CountdownTask::kOne);
      ctx.front() = CountdownTask::kBos;
      engine.add(april::live::GenRequest{key, ctx, 0, static_cast<std::int32_t>(response_tok), key});
      ++key;
    }
    while (engine.running() + engine.waiting() > 0) engine.step();
    (void)engine.take_iteration_log();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  fmt::print("model {}, train batch {} samples up to {} tokens, rollouts of {} requests x {} tokens, {} rounds\n", size, samples,
             response_tok, requests, response_tok, rounds);
  fmt::print("{:>6} {:>14} {:>10} {:>15} {:>8}\n", "round", "after train s", "rollout s", "after engine s", "ratio");
  (void)rollout_s();  // first shapes of both, untimed
  (void)train_s();
  std::vector<double> ratios;
  for (std::int64_t r = 0; r < rounds; ++r) {
    (void)train_s();
    const double warm = train_s();
    const double roll = rollout_s();
    const double after = train_s();
    ratios.push_back(after / warm);
    fmt::print("{:>6} {:>14.3f} {:>10.3f} {:>15.3f} {:>8.3f}\n", r, warm, roll, after, after / warm);
  }
  std::sort(ratios.begin(), ratios.end());
  fmt::print("median after engine / after train: {:.3f} (range {:.3f}-{:.3f})\n", ratios[ratios.size() / 2], ratios.front(), ratios.back());
  return 0;
}
