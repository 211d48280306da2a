#include "studies/training_rows.hpp"

#include "sim/fitted_defaults.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "base/config.hpp"
#include "base/json_file.hpp"
#include "sim/hardware.hpp"
#include "studies/component_fields.hpp"

namespace april::studies {

std::vector<TrainingRow> read_training_rows(const std::string& path) {
  const auto f = base::read_json_file(path, "training benchmark rows");
  const auto dir = std::filesystem::path(path).parent_path();
  std::vector<TrainingRow> out;
  for (const auto& [i, x] : component_rows(f)) {
    const RowFields r(f, x, i);
    TrainingRow t;
    t.id = r.text("id");
    t.model = builtin_or_beside(r.text("april_model"), dir);
    t.accelerator = r.text("accelerator");
    const auto framework = r.text("april_framework");
    if (framework == "megatron")
      t.framework = sim::TrainFramework::Megatron;
    else if (framework == "fsdp")
      t.framework = sim::TrainFramework::Fsdp;
    else
      r.refuse("april_framework", fmt::format("'{}': megatron or fsdp", framework));
    t.gpus = r.count("gpus", -1, 1, 1 << 20);
    t.tensor_parallel = r.count("tensor_parallel", 1, 1, 1024);
    t.pipeline_parallel = r.count("pipeline_parallel", 1, 1, 1024);
    t.context_parallel = r.count("context_parallel", 1, 1, 1024);
    t.expert_parallel = r.count("expert_parallel", 1, 1, 1 << 16);
    t.virtual_pipeline = r.count("virtual_pipeline", 1, 1, 1024);
    t.seq_len = r.count("seq_len", -1, 1, 1 << 22);
    t.global_batch = r.count("global_batch_sequences", -1, 1, 1 << 24);
    t.micro_batch = r.count("micro_batch_sequences", 1, 1, 1 << 16);
    const auto checkpointing = r.text_or("activation_checkpointing", "none");
    if (checkpointing != "none" && checkpointing != "selective" && checkpointing != "full") {
      r.refuse("activation_checkpointing", fmt::format("'{}': none, selective or full", checkpointing));
    }
    t.full_recompute = checkpointing == "full";
    // april's trainer runs bf16 matmuls, as verl's and slime's do.
    if (const auto precision = r.text_or("precision", "bf16"); precision != "bf16") {
      r.refuse("precision", fmt::format("'{}': the trainer model is bf16's", precision));
    }
    t.tok_s_per_gpu = r.number("tokens_per_s_per_gpu", 1e-3, 1e9);
    t.source = r.source();
    const auto model_parallel = t.tensor_parallel * t.pipeline_parallel * t.context_parallel;
    if (t.gpus % model_parallel != 0) r.refuse("gpus", fmt::format("{} GPUs are no multiple of TP x PP x CP = {}", t.gpus, model_parallel));
    r.check_resolves(t.model, t.accelerator);
    out.push_back(std::move(t));
  }
  return out;
}

double predict_training_tok_s_per_gpu(const TrainingRow& row, const sim::ModelArch& model, const sim::Accelerator& hw,
                                      const TrainerFit& fit) {
  sim::TrainerSetup s;
  s.framework = row.framework;
  s.gpus = row.gpus;
  s.tensor_parallel = row.tensor_parallel;
  s.pipeline_parallel = row.pipeline_parallel;
  s.context_parallel = row.context_parallel;
  s.expert_parallel = row.expert_parallel;
  s.virtual_pipeline = row.virtual_pipeline;
  s.mfu = fit.mfu;
  s.micro_batch_overhead_s = fit.micro_batch_overhead_s;
  s.activation_passes = fit.activation_passes;
  // As a scenario's trainer has it: the engine's fitted HBM fraction.
  s.hbm_efficiency = sim::fitted::kEngineHbmEfficiency;
  s.full_recompute = row.full_recompute;
  s.old_logprob = false;
  s.ppo_mini_batches = 1;
  s.micro_batch_tok = row.micro_batch * row.seq_len;
  sim::TrainBatchShape b;
  b.samples = row.global_batch;
  b.tokens = row.global_batch * row.seq_len;
  b.longest_tok = row.seq_len;
  const double len = static_cast<double>(row.seq_len);
  b.attention_pairs = static_cast<double>(row.global_batch) * len * (len + 1.0) / 2.0;
  const auto t = sim::train_phase_times(model, hw, s, b);
  return static_cast<double>(b.tokens) / (t.total_s() * static_cast<double>(row.gpus));
}

}  // namespace april::studies
