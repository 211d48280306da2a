#include "adapters/live/detail/decode_graph.hpp"

#ifdef APRIL_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace april::live {

struct DecodeGraph::State {
#ifdef APRIL_TORCH_CUDA
  at::cuda::CUDAGraph graph;
#endif
  torch::Tensor tokens, pos, logits;  // the graph's inputs and output, on the device
};

DecodeGraph::DecodeGraph(const torch::Device& device, bool enabled)
    : device_(device), enabled_(enabled && device.is_cuda() && available()) {}
DecodeGraph::~DecodeGraph() = default;

bool DecodeGraph::available() {
#ifdef APRIL_TORCH_CUDA
  return true;
#else
  return false;
#endif
}

bool DecodeGraph::captured() const { return state_ != nullptr; }

torch::Tensor DecodeGraph::run(Transformer& model, KvCache& cache, const std::vector<std::int64_t>& tokens,
                               const std::vector<std::int64_t>& pos) {
  const auto host_tok = torch::tensor(tokens, torch::kLong), host_pos = torch::tensor(pos, torch::kLong);
#ifdef APRIL_TORCH_CUDA
  if (enabled_) {
    if (!state_) {
      auto st = std::make_unique<State>();
      st->tokens = host_tok.to(device_);
      st->pos = host_pos.to(device_);
      // Capture on a side stream, after one eager run there (cuBLAS handles and
      // workspaces are made outside the capture). A decode writes K/V at `pos`
      // from its inputs only, so running it twice leaves the cache as once.
      torch::cuda::synchronize();
      const auto side = c10::cuda::getStreamFromPool();
      {
        const c10::cuda::CUDAStreamGuard guard(side);
        (void)model->decode(st->tokens, st->pos, cache);
        side.synchronize();
        st->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        st->logits = model->decode(st->tokens, st->pos, cache);
        st->graph.capture_end();
      }
      side.synchronize();
      state_ = std::move(st);
    } else {
      state_->tokens.copy_(host_tok);
      state_->pos.copy_(host_pos);
    }
    state_->graph.replay();
    return state_->logits;
  }
#endif
  return model->decode(host_tok.to(device_), host_pos.to(device_), cache);
}

}  // namespace april::live
