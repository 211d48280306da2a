#pragma once
// What the live backend trains on: prompts by id, where a response ends, and
// the reward of a response. The built-in countdown task (countdown_task.hpp)
// and math prompts from a dataset through a Hugging Face tokenizer
// (math_task.hpp) are the two. The backend holds only prompt ids between
// steps, so a task maps an id to its prompt tokens on every use: ids are all
// that checkpoints and the loop's state carry. Plain C++: no torch.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/workload_source.hpp"

namespace april::live {

struct TaskExample {
  std::vector<std::int32_t> prompt;
  std::vector<std::int32_t> answer;  // the response to imitate, its end token included
};

// A task's groups in dataset order; next_index() is what a checkpoint
// records, so that a resumed run goes on with the next prompt.
class TaskWorkload : public base::WorkloadSource {
 public:
  [[nodiscard]] virtual std::int64_t next_index() const = 0;
};

class LiveTask {
 public:
  virtual ~LiveTask() = default;

  // One line for logs.
  [[nodiscard]] virtual std::string describe() const = 0;
  // Every token id a prompt or an answer may hold is below this.
  [[nodiscard]] virtual std::int64_t vocab() const = 0;
  // The longest prompt, in tokens (the model's positions must hold it and
  // max_response_len more).
  [[nodiscard]] virtual std::int64_t max_prompt_tok() const = 0;
  // The tokens at which a response ends (the engine stops there).
  [[nodiscard]] virtual std::vector<std::int32_t> end_tokens() const = 0;

  // The prompt of an id made by the task; std::invalid_argument for another.
  [[nodiscard]] virtual std::vector<std::int32_t> prompt_tokens(const std::string& prompt_id) const = 0;
  // The reward of `response` (as generated, its end token included when it
  // stopped) to the prompt `prompt_id`. Called from the trainer's thread too:
  // it must not change the task.
  [[nodiscard]] virtual double response_reward(const std::string& prompt_id, const std::vector<std::int32_t>& response) const = 0;
  // The reward a response must reach to count as correct (accuracy).
  [[nodiscard]] virtual double correct_reward() const { return 1.0; }

  // Supervised examples for a warm start, or none (a pretrained checkpoint
  // needs none; a dataset of final answers holds no response to imitate).
  [[nodiscard]] virtual bool has_supervised_examples() const = 0;
  [[nodiscard]] virtual TaskExample supervised_example(std::int64_t index) const = 0;

  // Held-out prompts for greedy accuracy: how many there are (-1: as many as
  // asked) and the id of the i-th.
  [[nodiscard]] virtual std::int64_t eval_prompt_count() const = 0;
  [[nodiscard]] virtual std::string eval_prompt_id(std::int64_t i) const = 0;

  // The training groups in dataset order from `first_index` on (a resumed
  // run starts where its checkpoint stopped), `samples_per_group` samples each.
  [[nodiscard]] virtual std::unique_ptr<TaskWorkload> workload(std::int64_t samples_per_group, std::int64_t first_index) const = 0;
};

}  // namespace april::live
