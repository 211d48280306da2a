#pragma once
// The built-in verifiable task with long-tail response lengths: count down
// from a number N drawn from a lognormal, then stop.
//   prompt:   <bos> N <sep>
//   answer:   N N-1 ... 1 <eos>          (N + 1 tokens; numbers are tokens)
// Reward is exact match (1 or 0). The prompt sets the answer's length, lengths
// have the long tail of RL rollouts, long answers are rare in the data (so the
// warm-started model is worst there), and a model that fails to stop runs on.
// Prompts are a pure function of (seed, index), so nothing is downloaded and
// a run can be resumed from a checkpoint by index.
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/live_task.hpp"

namespace april::live {

struct CountdownParams {
  double median_len = 6;      // median N
  double sigma = 0.7;         // lognormal sigma of N
  std::int64_t max_len = 32;  // largest N
  // Training prompts in the dataset: groups cycle through prompts 0..K-1,
  // epoch after epoch (their samples differ; their lengths to learn repeat).
  // 0: every group a new prompt.
  std::int64_t dataset_prompts = 0;
};

class CountdownTask final : public LiveTask {
 public:
  static constexpr std::int32_t kPad = 0, kBos = 1, kSep = 2, kEos = 3, kOne = 4;  // number k is token kOne + k - 1

  CountdownTask(CountdownParams params, std::uint64_t seed);
  [[nodiscard]] std::int64_t vocab() const override { return kOne + p_.max_len; }
  [[nodiscard]] std::int64_t max_prompt_tok() const override { return 3; }
  [[nodiscard]] std::int64_t max_answer_tok() const { return p_.max_len + 1; }

  using Example = TaskExample;
  [[nodiscard]] Example example(std::int64_t index) const;
  [[nodiscard]] const CountdownParams& params() const { return p_; }
  [[nodiscard]] static std::string prompt_id(std::int64_t index);
  // The index in a prompt id made by prompt_id(); throws on anything else.
  [[nodiscard]] static std::int64_t index_of(const std::string& prompt_id);
  // 1 when the response is exactly the answer (EOS included), else 0.
  [[nodiscard]] static double reward(const Example& ex, const std::vector<std::int32_t>& response);
  // Human-readable tokens: "<bos> 3 <sep>".
  [[nodiscard]] static std::string render(const std::vector<std::int32_t>& tokens);

  // LiveTask. Warm-start and held-out prompts come from index ranges far
  // from the training prompts', which count up from 0.
  static constexpr std::int64_t kSupervisedBase = std::int64_t{1} << 40;
  static constexpr std::int64_t kEvalBase = std::int64_t{1} << 41;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::vector<std::int32_t> end_tokens() const override { return {kEos}; }
  [[nodiscard]] std::vector<std::int32_t> prompt_tokens(const std::string& id) const override { return example(index_of(id)).prompt; }
  [[nodiscard]] double response_reward(const std::string& id, const std::vector<std::int32_t>& response) const override {
    return reward(example(index_of(id)), response);
  }
  [[nodiscard]] bool has_supervised_examples() const override { return true; }
  [[nodiscard]] TaskExample supervised_example(std::int64_t index) const override { return example(kSupervisedBase + index); }
  [[nodiscard]] std::int64_t eval_prompt_count() const override { return -1; }
  [[nodiscard]] std::string eval_prompt_id(std::int64_t i) const override { return prompt_id(kEvalBase + i); }
  [[nodiscard]] std::unique_ptr<TaskWorkload> workload(std::int64_t samples_per_group, std::int64_t first_index) const override;

 private:
  CountdownParams p_;
  std::uint64_t seed_;
};

// Groups in dataset order: prompt i of the task (i modulo the dataset's
// size, when it has one), n samples each; the
// response lengths given are the correct answers' (the live engine ignores them).
class CountdownWorkload final : public TaskWorkload {
 public:
  CountdownWorkload(const CountdownTask& task, std::int64_t samples_per_group, std::int64_t first_index = 0);
  base::GroupSpec next_group(std::int64_t step) override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::int64_t next_index() const override { return next_; }

 private:
  const CountdownTask& task_;
  std::int64_t n_;
  std::int64_t next_;
};

}  // namespace april::live
