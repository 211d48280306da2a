// Math prompts as a live task: prompts through the chat template and the
// tokenizer, end tokens, rewards on decoded responses, the held-out split,
// the workload's order, and refusals.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "hf/chat_template.hpp"
#include "hf/tokenizer.hpp"
#include "tasks/math/math_task.hpp"

namespace april::live::math {
namespace {

const std::string kDatasets = APRIL_DATASETS_DIR;
const std::string kTokenizer = std::string(APRIL_HF_FIXTURES_DIR) + "/qwen3/tokenizer.json";

PromptDataset gsm8k() {
  auto o = dataset_layout("gsm8k").value();
  o.path = kDatasets + "/gsm8k-sample.jsonl";
  return read_prompt_dataset(o);
}

MathTaskOptions qwen3_options(std::int64_t eval) {
  MathTaskOptions o;
  o.chat = hf::ChatFamily::kQwen3;
  o.eval_prompts = eval;
  o.model_vocab = 448;  // the fixture model's vocab_size, past the tokenizer's 420 ids
  return o;
}

std::vector<std::int32_t> tokens(const hf::Tokenizer& t, const std::string& text) { return t.encode(text); }

TEST(MathTask, PromptsAreTheChatTemplateTokenized) {
  const auto tok = hf::Tokenizer::load(kTokenizer);
  const auto data = gsm8k();
  const MathTask task(data, tok, qwen3_options(6));
  EXPECT_EQ(task.train_prompts(), 20);
  EXPECT_EQ(task.eval_prompt_count(), 6);
  EXPECT_EQ(task.vocab(), 448);
  const auto want = tok.encode(hf::render_chat_prompt(hf::ChatFamily::kQwen3, {data.prompts[3].prompt, {}, {}}));
  EXPECT_EQ(task.prompt_tokens("math-3"), want);
  // <|im_start|>user ... ends with the assistant header.
  EXPECT_EQ(want.front(), *tok.token_to_id("<|im_start|>"));
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < 26; ++i)
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(task.prompt_tokens(MathTask::prompt_id(i)).size()));
  EXPECT_EQ(task.max_prompt_tok(), longest);
  // The chat family's end of turn ends a response, beside the model's own ids.
  EXPECT_EQ(task.end_tokens(), std::vector<std::int32_t>{*tok.token_to_id("<|im_end|>")});
  auto o = qwen3_options(6);
  o.end_tokens = {0};
  EXPECT_EQ(MathTask(data, tok, o).end_tokens(), (std::vector<std::int32_t>{0, 2}));
  EXPECT_NE(task.describe().find("20 to train on, 6 held out"), std::string::npos) << task.describe();
}

TEST(MathTask, RewardsJudgeTheDecodedResponse) {
  const auto tok = hf::Tokenizer::load(kTokenizer);
  const MathTask task(gsm8k(), tok, qwen3_options(6));
  const auto im_end = *tok.token_to_id("<|im_end|>");
  auto right = tokens(tok, "84 - 65 = 19, so \\boxed{19}");
  right.push_back(im_end);
  EXPECT_EQ(task.response_reward("math-0", right), 1.0);
  EXPECT_EQ(task.response_text(right), "84 - 65 = 19, so \\boxed{19}");  // the end token is special: not in the text
  auto wrong = tokens(tok, "\\boxed{21}");
  EXPECT_EQ(task.response_reward("math-0", wrong), 0.0);
  EXPECT_EQ(task.judge("math-0", wrong).verdict, Verdict::Incorrect);
  // An id past the tokenizer's 420 (the model's vocabulary is padded to 448) is no text.
  auto padded = tokens(tok, "\\boxed{19");
  padded.push_back(430);
  padded.push_back(*tok.token_to_id("}"));
  EXPECT_EQ(task.response_reward("math-0", padded), 1.0);
  // DAPO's values: -1 for a wrong answer or none.
  auto o = qwen3_options(6);
  o.reward = dapo_reward_values();
  const MathTask dapo(gsm8k(), tok, o);
  EXPECT_EQ(dapo.response_reward("math-0", wrong), -1.0);
  EXPECT_EQ(dapo.response_reward("math-0", tokens(tok, "I do not know")), -1.0);
  EXPECT_EQ(dapo.response_reward("math-0", right), 1.0);
  EXPECT_EQ(dapo.correct_reward(), 1.0);
}

TEST(MathTask, GroupsCycleTheTrainingRowsAndHeldOutRowsAreTheLast) {
  const auto tok = hf::Tokenizer::load(kTokenizer);
  const MathTask task(gsm8k(), tok, qwen3_options(6));
  auto w = task.workload(4, 0);
  std::vector<std::string> ids;
  for (int i = 0; i < 22; ++i) {
    const auto g = w->next_group(0);
    ids.push_back(g.prompt_id);
    EXPECT_EQ(g.response_tok.size(), 4U);
    EXPECT_EQ(g.prompt_tok, static_cast<std::int32_t>(task.prompt_tokens(g.prompt_id).size()));
  }
  EXPECT_EQ(ids[0], "math-0");
  EXPECT_EQ(ids[19], "math-19");
  EXPECT_EQ(ids[20], "math-0");  // the next epoch: no held-out row is trained on
  EXPECT_EQ(w->next_index(), 22);
  EXPECT_EQ(task.workload(4, 21)->next_group(0).prompt_id, "math-1");  // a resumed run goes on where it stopped
  EXPECT_EQ(task.eval_prompt_id(0), "math-20");
  EXPECT_EQ(task.eval_prompt_id(5), "math-25");
  EXPECT_THROW((void)task.eval_prompt_id(6), std::out_of_range);
  EXPECT_THROW((void)task.prompt_tokens("math-26"), std::invalid_argument);
  EXPECT_THROW((void)task.prompt_tokens("countdown-3"), std::invalid_argument);
  EXPECT_FALSE(task.has_supervised_examples());
}

std::string error_of(const MathTaskOptions& o) {
  try {
    const MathTask task(gsm8k(), hf::Tokenizer::load(kTokenizer), o);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MathTask, RefusesWhatItCannotRun) {
  EXPECT_NE(error_of(qwen3_options(26)).find("26 prompts, and 26 are to be held out"), std::string::npos) << error_of(qwen3_options(26));
  auto bare = qwen3_options(2);
  bare.chat.reset();
  EXPECT_NE(error_of(bare).find("no token ends a response"), std::string::npos) << error_of(bare);
  auto small = qwen3_options(2);
  small.model_vocab = 100;
  const auto e = error_of(small);
  EXPECT_NE(e.find("gsm8k-sample.jsonl:1: field 'prompt': token"), std::string::npos) << e;
  EXPECT_NE(e.find("past the model's vocabulary of 100"), std::string::npos) << e;
}

}  // namespace
}  // namespace april::live::math
