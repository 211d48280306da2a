#pragma once
// Prompts with gold answers from a JSON Lines file, one object a line, with
// the field names configurable so that the public math RL sets load as they
// are exported (examples/datasets/README.md shows each):
//
//  - DAPO-Math-17k (BytedTsinghua-SIA/DAPO-Math-17k; verl's RL parquet layout,
//    its dataset card lists prompt: list<{content, role}> and
//    reward_model: {ground_truth, style}; verl's
//    examples/data_preprocess/dapo_multiturn_w_tool.py reads
//    example["reward_model"]["ground_truth"]): prompt_field "prompt" (a chat
//    list), answer_field "reward_model.ground_truth". Its prompts already ask
//    for an "Answer: $Answer" last line.
//  - DeepScaleR (agentica-org/DeepScaleR-Preview-Dataset: fields problem,
//    answer, solution; shipped as one JSON array, deepscaler.json, which must
//    be turned into JSON Lines first: jq -c '.[]' deepscaler.json):
//    prompt_field "problem", answer_field "answer"; its users append
//    "Let's think step by step and output the final answer within \boxed{}."
//    (kBoxedInstruction as prompt_suffix).
//  - GSM8K (openai/gsm8k: question, answer, where the answer is a worked
//    solution ending in "#### 72"; verl's examples/data_preprocess/gsm8k.py
//    takes the text after "#### "): prompt_field "question", answer_field
//    "answer", answer_format gsm8k.
//
// Read line by line in bounded memory; JSON through base::parse_json only.
// Every refusal is a base::ConfigError naming the file, the line and the
// field: "gsm8k.jsonl:17: field 'answer': no '####' final answer".
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace april::live::math {

// A line longer than this is refused (a DAPO prompt is a few KB, a
// DeepScaleR row with its solution tens of KB), and so is a file longer than
// kMaxDatasetBytes: /dev/zero or a binary file ends in a clear error.
inline constexpr std::size_t kMaxDatasetLineBytes = std::size_t{8} << 20;
inline constexpr std::uint64_t kMaxDatasetBytes = std::uint64_t{4} << 30;

// DeepScaleR's and DeepSeek-R1's instruction for a boxed final answer, with
// the space that joins it to the problem.
inline constexpr std::string_view kBoxedInstruction = " Let's think step by step and output the final answer within \\boxed{}.";

enum class AnswerFormat {
  Plain,  // the field is the answer
  Gsm8k,  // the field is a worked solution: the answer is the text after its last "####"
};
const char* answer_format_name(AnswerFormat format);
// "plain" or "gsm8k"; anything else is a ConfigError naming both.
AnswerFormat parse_answer_format(std::string_view text);

struct PromptDatasetOptions {
  std::string path;
  // Field names; a dot walks into nested objects ("reward_model.ground_truth")
  // and a number into arrays ("messages.0.content"). Field names that
  // themselves hold a dot cannot be named.
  std::string prompt_field = "prompt";
  std::string answer_field = "answer";
  AnswerFormat answer_format = AnswerFormat::Plain;
  std::size_t max_prompts = 0;  // read only the first N prompts; 0: all
  // Appended to every prompt as written (no separator added): e.g. kBoxedInstruction.
  std::string prompt_suffix;
  std::size_t max_line_bytes = kMaxDatasetLineBytes;  // at least 1 MiB
};

// The field settings of a public layout: "gsm8k", "dapo-math", "deepscaler"
// (path empty, suffix empty); nullopt for another name.
std::optional<PromptDatasetOptions> dataset_layout(std::string_view name);
std::vector<std::string> dataset_layout_names();

struct MathPrompt {
  std::string prompt;    // the user turn's text, the suffix appended
  std::string answer;    // the gold answer as written (for gsm8k: after the last "####", trimmed)
  std::size_t line = 0;  // its line in the file, for logs
};

struct PromptDataset {
  std::string path;
  std::vector<MathPrompt> prompts;
  // Prompts taken from a chat list: the last "user" message's content; the
  // other messages (a system prompt, earlier turns) are not part of the
  // prompt, and are counted here so that describe() says so.
  std::size_t chat_prompts = 0;
  std::size_t dropped_messages = 0;

  // One line for logs: "gsm8k-sample.jsonl: 26 prompts (field 'question'; answers: field 'answer', gsm8k)".
  [[nodiscard]] std::string describe(const PromptDatasetOptions& options) const;
};

// Reads options.path. ConfigError when it cannot be opened, is a folder,
// holds no prompts, or any line is not a usable row. Only the prompt and
// answer of each row are kept (not a solution field, not the other messages).
PromptDataset read_prompt_dataset(const PromptDatasetOptions& options);

// The same over a stream; options.path names it in errors. A UTF-8 byte
// order mark at the start is skipped; blank lines and CR line ends too.
PromptDataset parse_prompt_dataset(std::istream& in, const PromptDatasetOptions& options);

}  // namespace april::live::math
