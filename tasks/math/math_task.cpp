#include "tasks/math/math_task.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "base/config.hpp"
#include "base/integer_text.hpp"

namespace april::live::math {
namespace {

constexpr std::string_view kIdPrefix = "math-";

// Groups cycle through the training rows in file order. A response's length
// is not known before it is generated: each sample's target is 0 (the live
// engine stops at an end token or at max_new, never at a target).
class MathWorkload final : public TaskWorkload {
 public:
  MathWorkload(const MathTask& task, std::vector<std::int32_t> prompt_tok, std::int64_t n, std::int64_t first)
      : task_(task), prompt_tok_(std::move(prompt_tok)), n_(n), next_(first) {}
  base::GroupSpec next_group(std::int64_t /*step*/) override {
    const auto row = next_ % static_cast<std::int64_t>(prompt_tok_.size());
    ++next_;
    base::GroupSpec g;
    g.prompt_id = MathTask::prompt_id(row);
    g.prompt_tok = prompt_tok_[static_cast<std::size_t>(row)];
    g.response_tok.assign(static_cast<std::size_t>(n_), 0);
    return g;
  }
  [[nodiscard]] std::string describe() const override { return fmt::format("{}, {} samples per prompt", task_.describe(), n_); }
  [[nodiscard]] std::int64_t next_index() const override { return next_; }

 private:
  const MathTask& task_;
  std::vector<std::int32_t> prompt_tok_;  // per training row
  std::int64_t n_;
  std::int64_t next_;
};

}  // namespace

MathTask::MathTask(PromptDataset dataset, hf::Tokenizer tokenizer, MathTaskOptions options)
    : path_(std::move(dataset.path)), tokenizer_(std::move(tokenizer)), opt_(std::move(options)) {
  const auto rows = static_cast<std::int64_t>(dataset.prompts.size());
  if (opt_.eval_prompts < 0 || opt_.eval_prompts >= rows) {
    throw base::ConfigError(fmt::format("{}: {} prompts, and {} are to be held out for evaluation: at least one must be left to train on",
                                        path_, rows, opt_.eval_prompts));
  }
  vocab_ = opt_.model_vocab > 0 ? opt_.model_vocab : tokenizer_.id_count();
  end_tokens_ = opt_.end_tokens;
  if (opt_.chat) {
    const auto* end = hf::chat_end_of_turn(*opt_.chat);
    const auto id = tokenizer_.token_to_id(end);
    if (!id) {
      throw base::ConfigError(
          fmt::format("the tokenizer has no token '{}', which ends a turn in the {} chat template", end, hf::chat_family_name(*opt_.chat)));
    }
    if (std::find(end_tokens_.begin(), end_tokens_.end(), *id) == end_tokens_.end()) end_tokens_.push_back(*id);
  }
  if (end_tokens_.empty()) {
    throw base::ConfigError("no token ends a response: the model's config names no eos_token_id and no chat template is used");
  }
  for (const auto t : end_tokens_) {
    if (t < 0 || t >= vocab_) throw base::ConfigError(fmt::format("end token {} is outside the model's vocabulary of {}", t, vocab_));
  }
  rows_.reserve(dataset.prompts.size());
  for (auto& p : dataset.prompts) {
    Row r;
    const auto text = opt_.chat ? hf::render_chat_prompt(*opt_.chat, hf::ChatPrompt{p.prompt, {}, {}}) : p.prompt;
    try {
      r.prompt = tokenizer_.encode(text);
    } catch (const std::invalid_argument& e) {
      throw base::ConfigError(fmt::format("{}:{}: field 'prompt': {}", path_, p.line, e.what()));
    }
    if (r.prompt.empty()) throw base::ConfigError(fmt::format("{}:{}: field 'prompt': no tokens", path_, p.line));
    for (const auto t : r.prompt) {
      if (t >= vocab_) {
        throw base::ConfigError(
            fmt::format("{}:{}: field 'prompt': token {} is past the model's vocabulary of {}", path_, p.line, t, vocab_));
      }
    }
    r.answer = std::move(p.answer);
    r.line = p.line;
    max_prompt_tok_ = std::max<std::int64_t>(max_prompt_tok_, static_cast<std::int64_t>(r.prompt.size()));
    prompt_tok_sum_ += static_cast<std::int64_t>(r.prompt.size());
    rows_.push_back(std::move(r));
  }
}

std::string MathTask::describe() const {
  return fmt::format("math prompts from {}: {} to train on, {} held out; prompts {:.0f} tokens on average, {} at most ({})", path_,
                     train_prompts(), opt_.eval_prompts, static_cast<double>(prompt_tok_sum_) / static_cast<double>(rows_.size()),
                     max_prompt_tok_,
                     opt_.chat ? fmt::format("{} chat template", hf::chat_family_name(*opt_.chat)) : std::string("no chat template"));
}

std::string MathTask::prompt_id(std::int64_t row) { return fmt::format("{}{}", kIdPrefix, row); }

const MathTask::Row& MathTask::row(const std::string& id) const {
  if (id.rfind(kIdPrefix, 0) == 0) {
    const auto v = base::read_integer(std::string_view(id).substr(kIdPrefix.size()));
    if (const auto* i = std::get_if<std::int64_t>(&v);
        i != nullptr && *i >= 0 && *i < static_cast<std::int64_t>(rows_.size()) && prompt_id(*i) == id) {
      return rows_[static_cast<std::size_t>(*i)];
    }
  }
  throw std::invalid_argument(fmt::format("'{}' is not a prompt id of {} ({} rows)", id, path_, rows_.size()));
}

std::vector<std::int32_t> MathTask::prompt_tokens(const std::string& id) const { return row(id).prompt; }

std::string MathTask::response_text(const std::vector<std::int32_t>& response) const {
  std::vector<hf::TokenId> known;
  known.reserve(response.size());
  for (const auto t : response) {
    if (t >= 0 && t < tokenizer_.id_count()) known.push_back(t);
  }
  return tokenizer_.decode(known, true);
}

MathJudgement MathTask::judge(const std::string& id, const std::vector<std::int32_t>& response) const {
  return judge_math_response(response_text(response), row(id).answer, opt_.reward);
}

double MathTask::response_reward(const std::string& id, const std::vector<std::int32_t>& response) const {
  return judge(id, response).reward;
}

TaskExample MathTask::supervised_example(std::int64_t /*index*/) const {
  throw std::logic_error("a math task has no supervised examples (has_supervised_examples is false)");
}

std::string MathTask::eval_prompt_id(std::int64_t i) const {
  if (i < 0 || i >= opt_.eval_prompts) throw std::out_of_range(fmt::format("held-out prompt {} of {}", i, opt_.eval_prompts));
  return prompt_id(train_prompts() + i);
}

std::unique_ptr<TaskWorkload> MathTask::workload(std::int64_t samples_per_group, std::int64_t first_index) const {
  std::vector<std::int32_t> prompt_tok;
  for (std::int64_t i = 0; i < train_prompts(); ++i)
    prompt_tok.push_back(static_cast<std::int32_t>(rows_[static_cast<std::size_t>(i)].prompt.size()));
  return std::make_unique<MathWorkload>(*this, std::move(prompt_tok), samples_per_group, first_index);
}

}  // namespace april::live::math
