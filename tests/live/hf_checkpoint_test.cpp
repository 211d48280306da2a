// Hugging Face checkpoints on the live transformer, against Hugging Face's
// own outputs: tests/live/hf holds tiny random checkpoints of each family and
// the logits and greedy continuations that transformers 5.17 computed for
// them (tests/live/hf/make_hf_reference.py; provenance.txt).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "adapters/live/detail/hf_checkpoint.hpp"
#include "adapters/live/generate.hpp"
#include "base/atomic_file.hpp"
#include "base/bounded_read.hpp"
#include "base/config.hpp"
#include "hf/safetensors.hpp"
#include "live_support.hpp"

namespace april::live {
namespace {

namespace fs = std::filesystem;
using testing::device_name;
using testing::test_device;

std::string fixture(const std::string& name) { return std::string(APRIL_HF_FIXTURES_DIR) + "/" + name; }

// A reference tensor of `dir`/reference.safetensors as a torch tensor.
torch::Tensor reference(const SafetensorsFile& f, const std::string& name) {
  const auto* t = f.find(name);
  EXPECT_NE(t, nullptr) << name;
  const auto dtype = t->dtype == StDtype::I64 ? torch::kLong : torch::kFloat32;
  auto out = torch::empty(t->shape, torch::TensorOptions().dtype(dtype));
  std::memcpy(out.data_ptr(), t->data, t->bytes);
  return out;
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

class HfFamilies : public ::testing::TestWithParam<std::string> {};

// Float32, 64-token prompt: every position's logits within 1e-4 of
// transformers', through the full forward and through the engine's
// prefill + decode path (generate), whose greedy tokens must be the same.
TEST_P(HfFamilies, LogitsAndGreedyTokensMatchHuggingFace) {
  const auto dir = fixture(GetParam());
  const SafetensorsFile ref(dir + "/reference.safetensors");
  const auto ids = reference(ref, "input_ids");
  auto ck = load_hf_checkpoint(dir, ids.size(0) + 16, test_device());
  torch::NoGradGuard no_grad;
  const auto logits = ck.model->forward(ids.unsqueeze(0).to(test_device()))[0].cpu();
  EXPECT_LE(max_abs_diff(logits, reference(ref, "logits")), 1e-4);

  GenerateRequest r;
  r.checkpoint_dir = dir;
  r.prompt_ids.assign(ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + ids.size(0));
  r.max_new_tokens = 16;
  r.greedy = true;
  r.device = device_name();
  const auto g = generate(r);
  const auto want = reference(ref, "greedy_ids");
  ASSERT_EQ(g.output_ids.size(), 16u);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(g.output_ids[i], want[static_cast<std::int64_t>(i)].item<std::int64_t>()) << "token " << i;
  EXPECT_LE(max_abs_diff(torch::tensor(g.output_logprobs), reference(ref, "greedy_logprobs")), 1e-4);
}

// The same model saved by transformers in bfloat16, in three shards with an
// index: read and widened to float32, it computes what transformers computes
// from the widened weights.
TEST_P(HfFamilies, Bf16ShardsReadAsTheirWidenedWeights) {
  const SafetensorsFile ref(fixture(GetParam()) + "/reference.safetensors");
  const auto ids = reference(ref, "input_ids");
  auto ck = load_hf_checkpoint(fixture(GetParam() + "-bf16-sharded"), ids.size(0), test_device());
  EXPECT_EQ(ck.file_dtype, StDtype::BF16);
  torch::NoGradGuard no_grad;
  EXPECT_LE(max_abs_diff(ck.model->forward(ids.unsqueeze(0).to(test_device()))[0].cpu(), reference(ref, "logits_bf16_weights")), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Families, HfFamilies, ::testing::Values("qwen3", "qwen2", "llama"));

std::string fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("april_hf_ckpt_" + name);
  base::remove_tree(dir.string());
  fs::create_directories(dir);
  return dir.string();
}

// Load, save, load: the same bits. Saved in the file's dtype, sharded above
// the size given, with the index, config and tokenizer beside the weights;
// every tensor's bytes are those transformers wrote.
TEST(HfCheckpoint, SaveThenLoadIsBitExact) {
  for (const std::string name : {"qwen2-bf16-sharded", "qwen3"}) {
    const auto src = fixture(name);
    auto a = load_hf_checkpoint(src, 32, test_device());
    const auto out = fresh_dir("save_" + name);
    save_hf_checkpoint(a.model, src, out, HfSaveOptions{a.file_dtype, 100'000});
    EXPECT_TRUE(fs::exists(out + "/config.json"));
    EXPECT_TRUE(fs::exists(out + "/model.safetensors.index.json"));
    EXPECT_EQ(fs::exists(out + "/tokenizer.json"), fs::exists(src + "/tokenizer.json"));
    auto b = load_hf_checkpoint(out, 32, test_device());
    auto pa = a.model->named_parameters();
    for (const auto& p : b.model->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), pa[p.key()])) << name << " " << p.key();
    // The raw bytes: what transformers wrote, tensor by tensor.
    std::map<std::string, std::string> mine;
    for (const auto& e : fs::directory_iterator(out)) {
      if (e.path().extension() != ".safetensors") continue;
      const SafetensorsFile f(e.path().string());
      for (const auto& t : f.tensors()) mine[t.name] = std::string(reinterpret_cast<const char*>(t.data), t.bytes);
    }
    std::size_t compared = 0;
    for (const auto& e : fs::directory_iterator(src)) {
      if (e.path().extension() != ".safetensors" || e.path().filename() == "reference.safetensors") continue;
      const SafetensorsFile f(e.path().string());
      for (const auto& t : f.tensors()) {
        ASSERT_EQ(mine.count(t.name), 1u) << name << ": " << t.name << " not saved";
        EXPECT_EQ(mine[t.name], std::string(reinterpret_cast<const char*>(t.data), t.bytes)) << name << ": " << t.name;
        ++compared;
      }
    }
    EXPECT_EQ(compared, mine.size()) << name << ": saved tensors transformers did not write (a tied lm_head?)";
  }
}

std::string load_error(const std::string& dir) {
  try {
    load_hf_checkpoint(dir, 16, torch::kCPU);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// A checkpoint whose tensors do not fit its config is refused by name: a
// missing tensor, one with no place, a wrong shape, an index that lies.
TEST(HfCheckpoint, TensorsThatDoNotFitTheConfigAreRefusedByName) {
  const auto src = fixture("llama");
  const auto config_text = base::read_file_bounded(src + "/config.json", base::kSmallJsonMaxBytes, "model config");
  const auto with_config = [&](const std::string& name, const std::string& from, const std::string& to) {
    const auto dir = fresh_dir(name);
    fs::copy_file(src + "/model.safetensors", dir + "/model.safetensors");
    auto text = config_text;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    base::write_file_atomically(dir + "/config.json", text);
    return load_error(dir);
  };
  EXPECT_NE(with_config("more_layers", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3").find("tensor 'model.layers.2."),
            std::string::npos);
  EXPECT_NE(with_config("fewer_layers", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1").find("has no place in LlamaForCausalLM"),
            std::string::npos);
  EXPECT_NE(with_config("wider", "\"intermediate_size\": 96", "\"intermediate_size\": 128")
                .find("has shape [96, 64], the config makes it [128, 64]"),
            std::string::npos);
  EXPECT_NE(with_config("tied", "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true")
                .find("'lm_head.weight' differs from the embedding"),
            std::string::npos);
  const auto empty = fresh_dir("no_weights");
  fs::copy_file(src + "/config.json", empty + "/config.json");
  EXPECT_NE(load_error(empty).find("no model.safetensors or model.safetensors.index.json"), std::string::npos);
}

}  // namespace
}  // namespace april::live
