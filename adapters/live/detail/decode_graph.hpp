#pragma once
// The engine's decode iteration, replayed from a captured CUDA graph where
// this libtorch has CUDA (private: torch). Decode has fixed shapes (every
// slot, the whole cache length), so one capture serves every iteration: the
// tokens and positions are copied into the graph's input tensors, the graph
// replays, and its logits tensor holds the result. This removes the per-kernel
// launch cost that dominates a small model's decode on a GPU.
//
// The graph holds the addresses of the model's parameters and of the cache:
// weight syncs copy into the parameters in place (copy_weights), so a capture
// stays valid for the engine's life. Elsewhere (CPU, or a libtorch without
// CUDA) run() is the plain decode.
#include <memory>
#include <vector>

#include "adapters/live/detail/transformer.hpp"

namespace april::live {

class DecodeGraph {
 public:
  // `enabled`: use a graph where the device is CUDA and this build has CUDA graphs.
  DecodeGraph(const torch::Device& device, bool enabled);
  ~DecodeGraph();
  DecodeGraph(const DecodeGraph&) = delete;
  DecodeGraph& operator=(const DecodeGraph&) = delete;

  // logits [S, vocab] on the device for tokens/pos (host values, one per slot).
  torch::Tensor run(Transformer& model, KvCache& cache, const std::vector<std::int64_t>& tokens, const std::vector<std::int64_t>& pos);
  [[nodiscard]] bool captured() const;
  // Whether this build can capture at all (libtorch with CUDA).
  static bool available();

 private:
  struct State;
  torch::Device device_;
  bool enabled_;
  std::unique_ptr<State> state_;
};

}  // namespace april::live
