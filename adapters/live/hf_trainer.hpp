#pragma once
// The live backend's GRPO trainer on a Hugging Face checkpoint, with no
// engine beside it: the trainer of `april live --engines ... --weights-dir`,
// whose servers generate and load the weights it writes. No torch in this
// header.
#include <cstdint>
#include <memory>
#include <string>

#include "adapters/live/live_options.hpp"
#include "adapters/live/weights_trainer.hpp"

namespace april::live {

class HfTrainer final : public WeightsTrainer {
 public:
  // Loads options.hf_checkpoint (float32 master weights; a frozen reference
  // beside them when options.kl_coef > 0) with `max_seq` positions.
  HfTrainer(const LiveOptions& options, std::int64_t max_seq);
  ~HfTrainer() override;
  HfTrainer(const HfTrainer&) = delete;
  HfTrainer& operator=(const HfTrainer&) = delete;

  rl::TrainReport train(const std::vector<TrainSampleData>& batch, std::int64_t version) override;
  // In the source checkpoint's dtype, its config and tokenizer files copied.
  void write_weights(const std::string& dir) override;
  void save_state(const std::string& dir) override;
  void load_state(const std::string& dir) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace april::live
