#pragma once
// Math prompts from a dataset as a live task (live_task.hpp): each prompt is
// wrapped in a chat template and tokenized with a Hugging Face tokenizer, a
// response ends at the model's end tokens, and its reward is the math
// verifier's verdict on its decoded text against the gold answer. The last
// `eval_prompts` rows of the file are held out for greedy accuracy; the
// rest are the training prompts, taken in file order epoch after epoch.
// Plain C++: no torch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hf/chat_template.hpp"
#include "hf/tokenizer.hpp"
#include "tasks/live_task.hpp"
#include "tasks/math/math_verifier.hpp"
#include "tasks/math/prompt_dataset.hpp"

namespace april::live::math {

struct MathTaskOptions {
  // nullopt: the prompt text is tokenized as it is (a base model, or a
  // dataset whose prompts are already rendered).
  std::optional<hf::ChatFamily> chat;
  RewardValues reward;
  std::int64_t eval_prompts = 0;  // the file's last rows held out; at least one training prompt must remain
  // Where a response ends: the model's eos_token_id(s); the chat family's
  // end-of-turn token is added (hf::chat_end_of_turn).
  std::vector<std::int32_t> end_tokens;
  std::int64_t model_vocab = 0;  // the model's vocab_size; 0: the tokenizer's own
};

class MathTask final : public LiveTask {
 public:
  // Tokenizes every prompt now (their lengths size the model's positions
  // and the memory estimate). ConfigError when the dataset is too small for
  // the held-out rows, a token id is past model_vocab, or no end token is
  // known.
  MathTask(PromptDataset dataset, hf::Tokenizer tokenizer, MathTaskOptions options);

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::int64_t vocab() const override { return vocab_; }
  [[nodiscard]] std::int64_t max_prompt_tok() const override { return max_prompt_tok_; }
  [[nodiscard]] std::vector<std::int32_t> end_tokens() const override { return end_tokens_; }
  [[nodiscard]] std::vector<std::int32_t> prompt_tokens(const std::string& prompt_id) const override;
  [[nodiscard]] double response_reward(const std::string& prompt_id, const std::vector<std::int32_t>& response) const override;
  [[nodiscard]] double correct_reward() const override { return opt_.reward.correct; }
  [[nodiscard]] bool has_supervised_examples() const override { return false; }
  [[nodiscard]] TaskExample supervised_example(std::int64_t index) const override;
  [[nodiscard]] std::int64_t eval_prompt_count() const override { return opt_.eval_prompts; }
  [[nodiscard]] std::string eval_prompt_id(std::int64_t i) const override;
  [[nodiscard]] std::unique_ptr<TaskWorkload> workload(std::int64_t samples_per_group, std::int64_t first_index) const override;

  [[nodiscard]] std::int64_t train_prompts() const { return static_cast<std::int64_t>(rows_.size()) - opt_.eval_prompts; }
  // The judgement behind a reward, for logs and tests.
  [[nodiscard]] MathJudgement judge(const std::string& prompt_id, const std::vector<std::int32_t>& response) const;
  // The response's text as the verifier reads it: special tokens skipped,
  // and ids the tokenizer has no token for (a vocabulary padded past the
  // tokenizer's) left out.
  [[nodiscard]] std::string response_text(const std::vector<std::int32_t>& response) const;
  // "math-17": the dataset's row 17 (0-based, in file order).
  [[nodiscard]] static std::string prompt_id(std::int64_t row);

 private:
  struct Row {
    std::vector<std::int32_t> prompt;
    std::string answer;
    std::size_t line = 0;
  };
  [[nodiscard]] const Row& row(const std::string& prompt_id) const;

  std::string path_;
  hf::Tokenizer tokenizer_;
  MathTaskOptions opt_;
  std::vector<Row> rows_;
  std::vector<std::int32_t> end_tokens_;
  std::int64_t vocab_ = 0;
  std::int64_t max_prompt_tok_ = 0;
  std::int64_t prompt_tok_sum_ = 0;
};

}  // namespace april::live::math
