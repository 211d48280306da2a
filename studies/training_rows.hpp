#pragma once
// Training-throughput benchmarks that others published (framework, model,
// accelerator, GPUs and parallel sizes, sequence length, batch, tokens per
// second per GPU), and the trainer's phase model run on each step as the
// benchmark ran it: the component check and fit of the trainer's defaults.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/train_phases.hpp"

namespace april::studies {

struct TrainingRow {
  std::string id, model, accelerator;  // model: a built-in name or a config file's path
  sim::TrainFramework framework = sim::TrainFramework::Megatron;
  std::int64_t gpus = 1, tensor_parallel = 1, pipeline_parallel = 1, context_parallel = 1, expert_parallel = 1;
  std::int64_t virtual_pipeline = 1;  // interleaved 1F1B: model chunks per stage
  std::int64_t seq_len = 0, global_batch = 0, micro_batch = 1;
  bool full_recompute = false;  // activation checkpointing "full"
  double tok_s_per_gpu = 0;
  nlohmann::json source;
};

std::vector<TrainingRow> read_training_rows(const std::string& path);

// The trainer defaults a training fit chooses.
struct TrainerFit {
  double mfu = 0.35;                  // achieved fraction of the BF16 peak in the layers' matmuls
  double micro_batch_overhead_s = 0;  // per micro-batch and pass: launches, the framework's own work
  double activation_passes = 0;       // HBM passes over the activations per forward (sim::TrainerSetup)
};

// The row's tokens per second per GPU as april's trainer model predicts it:
// one optimizer step over global_batch sequences of seq_len tokens.
// The row's model and accelerator come resolved: a fit asks thousands of times.
double predict_training_tok_s_per_gpu(const TrainingRow& row, const sim::ModelArch& model, const sim::Accelerator& hw,
                                      const TrainerFit& fit);

}  // namespace april::studies
