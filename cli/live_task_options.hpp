#pragma once
// `april live`'s task: the built-in countdown on april's own model, or math
// prompts from a dataset for a Hugging Face checkpoint (--checkpoint with
// --dataset). The options, and the task and model they make.
#include <boost/program_options/options_description.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "adapters/live/model_config.hpp"
#include "base/config.hpp"
#include "tasks/live_task.hpp"

namespace april::cli {

struct LiveTaskOptions {
  std::string checkpoint;  // a Hugging Face checkpoint folder; "" for april's own model on the countdown task
  std::string dataset, dataset_layout, prompt_field, answer_field, answer_format, prompt_suffix;
  std::string chat;             // a chat family, "none", or "" for the architecture's usual one
  std::string reward = "math";  // math (1/0) or dapo (+1/-1)

  void add_to(boost::program_options::options_description& opts);
};

struct LiveTaskChoice {
  std::unique_ptr<live::LiveTask> task;
  live::ModelConfig model;  // what the backend will build (its max_seq set)
  std::string model_name;   // "small", or the checkpoint's architecture and folder
  // For the memory estimate: whether the model stops by itself (warm-started,
  // resumed or pretrained) and the longest answer the task expects of it.
  std::int64_t max_answer_tok = 0;
  bool pretrained = false;
};

// Reads the dataset and the tokenizer (math), or the countdown keys. Throws
// base::ConfigError or std::invalid_argument naming what is wrong.
LiveTaskChoice make_live_task(const LiveTaskOptions& options, const base::Config& config, std::int32_t max_response_len);

}  // namespace april::cli
