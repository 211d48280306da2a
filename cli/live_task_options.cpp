#include "cli/live_task_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>

#include "adapters/live/checkpoint/hf_config.hpp"
#include "adapters/live/live_config.hpp"
#include "base/run_keys.hpp"
#include "hf/chat_template.hpp"
#include "hf/tokenizer.hpp"
#include "tasks/countdown_task.hpp"
#include "tasks/math/math_task.hpp"

namespace april::cli {
namespace po = boost::program_options;

void LiveTaskOptions::add_to(po::options_description& opts) {
  opts.add_options()("checkpoint", po::value(&checkpoint),
                     "start from this Hugging Face checkpoint folder (config.json, safetensors, tokenizer.json) and train it on "
                     "--dataset, instead of april's own model on the countdown task")(
      "dataset", po::value(&dataset),
      "JSON Lines math prompts with gold answers (with --checkpoint); its last live.eval_prompts rows are held out")(
      "dataset-layout", po::value(&dataset_layout), "the field settings of a public set: gsm8k, dapo-math or deepscaler")(
      "prompt-field", po::value(&prompt_field), "the prompt's field (default prompt; a dot walks into objects)")(
      "answer-field", po::value(&answer_field), "the gold answer's field (default answer)")(
      "answer-format", po::value(&answer_format), "plain (the field is the answer) or gsm8k (the text after its last ####)")(
      "prompt-suffix", po::value(&prompt_suffix), "appended to every prompt, e.g. an instruction to answer in \\boxed{}")(
      "chat", po::value(&chat),
      "the chat template wrapping each prompt: qwen2, qwen2.5, qwen3, llama3, llama3.1 or none (default: "
      "qwen3 for Qwen3ForCausalLM, qwen2.5 for Qwen2ForCausalLM, llama3.1 for LlamaForCausalLM)")(
      "reward", po::value(&reward), "math (1 correct, 0 otherwise; the default) or dapo (+1 correct, -1 otherwise, as verl's DAPO)");
}

namespace {

std::optional<hf::ChatFamily> chat_family(const std::string& chat, const std::string& architecture) {
  if (chat == "none") return std::nullopt;
  if (!chat.empty()) return hf::chat_family_from_name(chat);
  if (architecture == "Qwen3ForCausalLM") return hf::ChatFamily::kQwen3;
  if (architecture == "Qwen2ForCausalLM") return hf::ChatFamily::kQwen2_5;
  return hf::ChatFamily::kLlama3_1;
}

LiveTaskChoice countdown(const LiveTaskOptions& o, const base::Config& c, std::int32_t max_response_len) {
  for (const auto& [given, name] : {std::pair{&o.dataset, "--dataset"},
                                    {&o.dataset_layout, "--dataset-layout"},
                                    {&o.prompt_field, "--prompt-field"},
                                    {&o.answer_field, "--answer-field"},
                                    {&o.answer_format, "--answer-format"},
                                    {&o.prompt_suffix, "--prompt-suffix"},
                                    {&o.chat, "--chat"}}) {
    if (!given->empty()) throw std::invalid_argument(fmt::format("{} needs --checkpoint: math prompts are for a Hugging Face model", name));
  }
  LiveTaskChoice out;
  auto task = std::make_unique<live::CountdownTask>(live::task_params(c), static_cast<std::uint64_t>(c.get(base::keys::kSeed)));
  out.model_name = c.get(live::keys::kLiveModel);
  out.model = live::model_config(out.model_name, task->vocab(), task->max_prompt_tok() + max_response_len);
  out.max_answer_tok = task->max_answer_tok();
  out.task = std::move(task);
  return out;
}

}  // namespace

LiveTaskChoice make_live_task(const LiveTaskOptions& o, const base::Config& c, std::int32_t max_response_len) {
  if (o.checkpoint.empty()) return countdown(o, c, max_response_len);
  if (o.dataset.empty()) throw std::invalid_argument("--checkpoint needs --dataset FILE: the prompts to train the model on");
  if (o.reward != "math" && o.reward != "dapo") throw std::invalid_argument(fmt::format("--reward '{}': math or dapo", o.reward));
  const auto hf = live::read_hf_config(o.checkpoint);

  live::math::PromptDatasetOptions d;
  if (!o.dataset_layout.empty()) {
    const auto layout = live::math::dataset_layout(o.dataset_layout);
    if (!layout) {
      throw std::invalid_argument(
          fmt::format("--dataset-layout '{}': one of {}", o.dataset_layout, fmt::join(live::math::dataset_layout_names(), ", ")));
    }
    d = *layout;
  }
  d.path = o.dataset;
  if (!o.prompt_field.empty()) d.prompt_field = o.prompt_field;
  if (!o.answer_field.empty()) d.answer_field = o.answer_field;
  if (!o.answer_format.empty()) d.answer_format = live::math::parse_answer_format(o.answer_format);
  if (!o.prompt_suffix.empty()) d.prompt_suffix = o.prompt_suffix;

  const auto tokenizer_path = (std::filesystem::path(o.checkpoint) / "tokenizer.json").string();
  if (!std::filesystem::exists(tokenizer_path)) {
    throw base::ConfigError(fmt::format("{} is missing: math prompts are tokenized with the checkpoint's own tokenizer", tokenizer_path));
  }
  live::math::MathTaskOptions mo;
  mo.chat = chat_family(o.chat, hf.model.architecture);
  if (o.reward == "dapo") mo.reward = live::math::dapo_reward_values();
  mo.eval_prompts = c.get(live::keys::kLiveEvalPrompts);
  for (const auto id : hf.eos_token_ids) mo.end_tokens.push_back(static_cast<std::int32_t>(id));
  mo.model_vocab = hf.model.vocab;
  auto dataset = live::math::read_prompt_dataset(d);
  auto task = std::make_unique<live::math::MathTask>(std::move(dataset), hf::Tokenizer::load(tokenizer_path), mo);

  LiveTaskChoice out;
  out.model = hf.model;
  out.model.max_seq = task->max_prompt_tok() + max_response_len;
  if (hf.max_position_embeddings > 0 && out.model.max_seq > hf.max_position_embeddings) {
    throw base::ConfigError(
        fmt::format("{}: the longest prompt ({} tokens) and max_response_len ({}) make {} positions, past the model's "
                    "max_position_embeddings ({})",
                    o.checkpoint, task->max_prompt_tok(), max_response_len, out.model.max_seq, hf.max_position_embeddings));
  }
  out.model_name = fmt::format("{} from {}", hf.model.architecture, o.checkpoint);
  out.max_answer_tok = max_response_len;
  out.pretrained = true;
  out.task = std::move(task);
  return out;
}

}  // namespace april::cli
