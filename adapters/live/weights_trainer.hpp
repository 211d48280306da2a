#pragma once
// A trainer apart from any engine (`april live --engines` with
// --weights-dir): it trains on the batches that servers generated and writes
// its weights as a checkpoint that the servers load. Plain C++: no torch.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <stdexcept>

#include "rl/backend.hpp"
#include "tasks/live_task.hpp"

namespace april::live {

// One trained sample: its prompt and response tokens, the sampler's
// log-probs and the version that sampled each token, its reward and group.
struct TrainSampleData {
  std::vector<std::int32_t> prompt, response;
  std::vector<float> rollout_logprobs;      // one per response token
  std::vector<std::int64_t> token_version;  // one per response token
  double reward = 0;
  std::int64_t group = 0;
};

// The batch as a trainer reads it, from a backend's store of samples by key
// (each entry's prompt_id, tokens and the sampler's logprobs): the tokens,
// their log-probs, each token's version from the loop's segments, the
// task's reward and the group. `who` names the backend in errors.
template <typename Store>
std::vector<TrainSampleData> train_sample_data(const std::vector<rl::TrainSample>& batch, const Store& store, const LiveTask& task,
                                               const char* who) {
  std::vector<TrainSampleData> data;
  for (const auto& s : batch) {
    const auto& st = store.at(s.key);
    TrainSampleData d;
    d.prompt = task.prompt_tokens(st.prompt_id);
    d.response = st.tokens;
    d.rollout_logprobs = st.logprobs;
    if (d.rollout_logprobs.size() != d.response.size()) {
      throw std::runtime_error(fmt::format("{}: sample {} has {} log-probs for {} tokens (return_logprob unanswered?)", who, s.key,
                                           d.rollout_logprobs.size(), d.response.size()));
    }
    for (const auto& [v, n] : s.segments) d.token_version.insert(d.token_version.end(), static_cast<std::size_t>(n), v);
    if (d.token_version.size() != d.response.size()) {
      throw std::logic_error(
          fmt::format("{}: sample {} has {} tokens but segments cover {}", who, s.key, d.response.size(), d.token_version.size()));
    }
    d.reward = task.response_reward(st.prompt_id, d.response);
    d.group = rl::key_group(s.key);
    data.push_back(std::move(d));
  }
  return data;
}

class WeightsTrainer {
 public:
  virtual ~WeightsTrainer() = default;
  // One optimizer step on `batch`, sampled up to policy version `version`.
  virtual rl::TrainReport train(const std::vector<TrainSampleData>& batch, std::int64_t version) = 0;
  // The weights as a Hugging Face checkpoint in the folder `dir` (made by
  // the caller, empty), for a server's /update_weights_from_disk.
  virtual void write_weights(const std::string& dir) = 0;
  // Its weights and optimizer state in the folder `dir` (model.pt,
  // optimizer.pt), for --save; load_state reads them back (--resume),
  // throwing std::runtime_error naming the file that cannot be read.
  virtual void save_state(const std::string& dir) = 0;
  virtual void load_state(const std::string& dir) = 0;
};

}  // namespace april::live
