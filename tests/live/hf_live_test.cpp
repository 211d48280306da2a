// The live backend on a Hugging Face checkpoint with math prompts: the
// engine serves the checkpoint as `april generate` reads it, the trainer
// gets the verifier's rewards, and the loop's policies run on it. The
// random-weight Qwen3 fixture (tests/live/hf/qwen3) and the GSM8K sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "adapters/live/generate.hpp"
#include "adapters/live/live_backend.hpp"
#include "base/config.hpp"
#include "hf/tokenizer.hpp"
#include "rl/rl_loop.hpp"
#include "tasks/math/math_task.hpp"
#include "test_support.hpp"

#include "live_support.hpp"

namespace april::live {
namespace {

using namespace april::live::testing;

const std::string kQwen3 = std::string(APRIL_HF_FIXTURES_DIR) + "/qwen3";

math::MathTask gsm8k_task(const math::RewardValues& reward = {}) {
  auto d = math::dataset_layout("gsm8k").value();
  d.path = std::string(APRIL_DATASETS_DIR) + "/gsm8k-sample.jsonl";
  math::MathTaskOptions o;
  o.chat = hf::ChatFamily::kQwen3;
  o.eval_prompts = 6;
  o.model_vocab = 448;
  o.reward = reward;
  return math::MathTask(math::read_prompt_dataset(d), hf::Tokenizer::load(kQwen3 + "/tokenizer.json"), o);
}

LiveOptions hf_live(std::int32_t max_response_len) {
  LiveOptions o = tiny_live();
  o.hf_checkpoint = kQwen3;
  o.sft_steps = 0;
  o.max_response_len = max_response_len;
  return o;
}

// Greedy in the engine (batched with other requests, through its KV cache)
// gives what `april generate --greedy` gives for the same prompt, up to the
// first end token, where the engine stops.
TEST(HfLive, TheEngineServesTheCheckpointAsGenerateReadsIt) {
  const auto task = gsm8k_task();
  auto o = hf_live(12);
  o.temperature = 0;
  LiveBackend live(o, task);
  EXPECT_EQ(live.stats().parameters, 115136);  // transformers' count (tests/live/hf/provenance.txt)
  for (std::int32_t i = 0; i < 3; ++i) {
    const auto prompt = task.prompt_tokens(math::MathTask::prompt_id(i));
    live.submit({rl::make_sample_key(i, 0), math::MathTask::prompt_id(i), static_cast<std::int32_t>(prompt.size()), 0, 12, 0, 0});
  }
  std::vector<rl::SampleProgress> done;
  while (done.size() < 3) {
    for (auto& p : live.wait_for_completions()) done.push_back(p);
  }
  const auto ends = task.end_tokens();
  for (std::int32_t i = 0; i < 3; ++i) {
    GenerateRequest r;
    r.checkpoint_dir = kQwen3;
    for (const auto t : task.prompt_tokens(math::MathTask::prompt_id(i))) r.prompt_ids.push_back(t);
    r.max_new_tokens = 12;
    r.greedy = true;
    r.device = device_name();
    const auto g = generate(r);
    std::vector<std::int32_t> want;
    for (const auto id : g.output_ids) {
      want.push_back(static_cast<std::int32_t>(id));
      if (std::find(ends.begin(), ends.end(), id) != ends.end()) break;
    }
    EXPECT_EQ(live.sample_tokens(rl::make_sample_key(i, 0)), want) << "prompt " << i;
  }
}

// The trainer's reward is the verifier's on each response's decoded text:
// with DAPO's values a response without the gold answer scores -1, so a
// batch's mean is not the 0 a missing reward would give.
TEST(HfLive, TheTrainerGetsTheVerifiersRewards) {
  const auto task = gsm8k_task(math::dapo_reward_values());
  LiveBackend live(hf_live(10), task);
  std::vector<rl::TrainSample> batch;
  for (std::int32_t i = 0; i < 4; ++i) {
    const auto prompt = task.prompt_tokens("math-1");
    live.submit({rl::make_sample_key(1, i), "math-1", static_cast<std::int32_t>(prompt.size()), 0, 10, 0, 0});
  }
  std::size_t finished = 0;
  while (finished < 4) finished += live.wait_for_completions().size();
  double want = 0;
  for (std::int32_t i = 0; i < 4; ++i) {
    const auto key = rl::make_sample_key(1, i);
    const auto tokens = live.sample_tokens(key);
    want += task.response_reward("math-1", tokens) / 4;
    rl::TrainSample s;
    s.key = key;
    s.prompt_tok = static_cast<std::int32_t>(task.prompt_tokens("math-1").size());
    s.response_tok = static_cast<std::int32_t>(tokens.size());
    s.segments = {{0, s.response_tok}};
    batch.push_back(s);
  }
  const auto report = live.train(batch, 0);
  ASSERT_TRUE(report.reward_mean.has_value());
  EXPECT_DOUBLE_EQ(*report.reward_mean, want);
  EXPECT_LT(want, 0.0);  // random weights give no gold answer
  ASSERT_TRUE(report.accuracy.has_value());
  EXPECT_EQ(*report.accuracy, 0.0);
}

// Sync and APRIL run their steps on the checkpoint, over the training rows
// only; the held-out ones are evaluated greedily.
TEST(HfLive, SyncAndAprilRunStepsOnMathPrompts) {
  const auto task = gsm8k_task();
  for (const std::string name : {"sync", "april"}) {
    april::testing::Fixture f("handcheck", {"rollout_batch_size=2", "n_samples_per_prompt=2", "max_response_len=10"});
    auto policy = f.registry.get(name).make(f.config);
    LiveBackend live(hf_live(10), task);
    auto workload = task.workload(2, 0);
    rl::RlLoop loop(live, *policy, *workload, {2, 10, false});
    std::int64_t generated = 0;  // APRIL's second batch may be all groups its first step over-provisioned
    for (int s = 0; s < 2; ++s) {
      const auto m = loop.run_step();
      generated += m.tokens_generated;
      EXPECT_GT(m.batch_response_tok, 0) << name;
      ASSERT_TRUE(m.reward_mean.has_value()) << name;
      EXPECT_GE(*m.reward_mean, 0.0) << name;
      EXPECT_LE(*m.reward_mean, 1.0) << name;
    }
    EXPECT_GT(generated, 0) << name;
    EXPECT_GE(workload->next_index(), 4) << name;
    EXPECT_EQ(live.evaluate(6), 0.0) << name;
    EXPECT_THROW(live.evaluate(7), base::ConfigError) << name;  // 6 rows are held out
  }
}

}  // namespace
}  // namespace april::live
