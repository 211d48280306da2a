#pragma once
// A trainer apart from any engine (`april live --engines` with
// --weights-dir): it trains on the batches that servers generated and writes
// its weights as a checkpoint that the servers load. Plain C++: no torch.
#include <cstdint>
#include <string>
#include <vector>

#include "rl/backend.hpp"

namespace april::live {

// One trained sample: its prompt and response tokens, the sampler's
// log-probs and the version that sampled each token, its reward and group.
struct TrainSampleData {
  std::vector<std::int32_t> prompt, response;
  std::vector<float> rollout_logprobs;     // one per response token
  std::vector<std::int64_t> token_version;  // one per response token
  double reward = 0;
  std::int64_t group = 0;
};

class WeightsTrainer {
 public:
  virtual ~WeightsTrainer() = default;
  // One optimizer step on `batch`, sampled up to policy version `version`.
  virtual rl::TrainReport train(const std::vector<TrainSampleData>& batch, std::int64_t version) = 0;
  // The weights as a Hugging Face checkpoint in the folder `dir` (made by
  // the caller, empty), for a server's /update_weights_from_disk.
  virtual void write_weights(const std::string& dir) = 0;
};

}  // namespace april::live
