#pragma once
// A slot-based continuous-batching engine over the transformer (private: torch).
//  - requests join at iteration boundaries when a slot is free and leave when
//    they sample EOS or reach max_new tokens;
//  - every iteration decodes one token for every slot with fixed shapes (all
//    slots, the whole cache length), so a request's numbers do not depend on
//    what else is running;
//  - prefill: `exact_prefill` feeds known tokens one per iteration through the
//    same decode kernel (bitwise the same KV whether a request is fresh or
//    resumed, alone or not); otherwise one batched forward over everything
//    admitted at a boundary (faster; equal to the other path up to rounding);
//  - sampling: temperature and top-p, with a uniform draw that depends only on
//    the request's seed and the token's index, so outputs do not depend on the
//    batch; log-probs are recorded at sampling time.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "adapters/live/detail/decode_graph.hpp"
#include "adapters/live/detail/transformer.hpp"
#include "adapters/live/live_options.hpp"
#include "rl/backend_profile.hpp"

namespace april::live {

struct EngineOptions {
  std::int64_t slots = 16;
  double temperature = 1.0;  // 0: greedy
  double top_p = 1.0;
  bool exact_prefill = true;
  std::vector<std::int32_t> eos{3};  // a request ends at any of these tokens; none: at max_new only
  torch::Device device = torch::kCPU;
  // The serving copy's weights and KV cache (float32 or bfloat16). The trainer
  // keeps float32 master weights; a weight sync converts.
  torch::ScalarType dtype = torch::kFloat32;
  bool cuda_graph = true;  // on CUDA, replay decode from a captured graph (detail/decode_graph.hpp)
  // Batched prefill pads its longest context up to a multiple of this (at
  // most max_seq): fewer distinct prefill shapes, each of which costs a slow
  // first pass on a GPU. 1: no padding.
  std::int64_t prefill_pad_tok = 1;
  bool record_iterations = false;  // keep one IterationPoint per step() (for validation)
};

struct GenRequest {
  std::uint64_t key = 0;
  std::vector<std::int32_t> context;  // prompt + tokens generated before (resume)
  std::int32_t generated_before = 0;  // how many of `context` are response tokens
  std::int32_t max_new = 0;
  std::uint64_t seed = 0;
};

// One request's own sampling, where it differs from the engine's (april
// serve: every HTTP request carries its own parameters).
struct RequestSampling {
  std::optional<double> temperature;      // unset: the engine's
  std::optional<double> top_p;            // unset: the engine's
  std::vector<std::int32_t> stop_tokens;  // also end the request, beside the engine's eos
  bool ignore_eos = false;                // the engine's eos does not end it (stop_tokens still do)
};

struct GenResult {
  std::uint64_t key = 0;
  std::vector<std::int32_t> tokens;  // generated in this submission
  std::vector<float> logprobs;
  bool finished = false;         // EOS or max_new reached
  std::int32_t stop_token = -1;  // the end token it finished at; -1 when it reached max_new or did not finish
};

struct EngineStats {
  std::int64_t iterations = 0;
  std::int64_t decoded_tok = 0;  // sampled tokens
  std::int64_t prefill_tok = 0;  // known tokens fed
  double busy_s = 0;             // wall time inside step()
  double running_slot_s = 0;     // running requests x step time
};

// The live.* serving settings onto an engine's options and its model (the
// fused path goes on the serving model's decode only).
void apply_serving(const ServingOptions& serving, EngineOptions& options, Transformer& model);

class KvEngine {
 public:
  KvEngine(Transformer model, EngineOptions options);
  void add(GenRequest request, RequestSampling sampling = {});
  // One iteration: admit, decode one token for every running request.
  // Returns the requests that finished, in admission order.
  std::vector<GenResult> step();
  // Stops everything; returns every queued or running request's progress.
  std::vector<GenResult> abort_all();
  // Stops one queued or running request; its progress, or nullopt when no
  // request has the key.
  std::optional<GenResult> abort(std::uint64_t key);
  [[nodiscard]] std::size_t running() const;
  [[nodiscard]] std::size_t waiting() const { return queue_.size(); }
  // Tokens whose K and V the cache holds for the running requests.
  [[nodiscard]] std::int64_t resident_tok() const;
  // Each running request's tokens generated in this submission, then each
  // queued one's (none), in the order abort_all returns them.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, std::int32_t>> in_flight_progress() const;
  // Each running request's output so far (its key, tokens and log-probs of
  // this submission), in slot order: what a streaming server sends on.
  void visit_running(const std::function<void(const GenResult&)>& visit) const;
  [[nodiscard]] const EngineStats& stats() const { return stats_; }
  // The recorded iterations since the last call (empty unless record_iterations).
  std::vector<rl::IterationPoint> take_iteration_log() { return std::exchange(log_, {}); }
  // The last step()'s iteration (batch 0 and no prefill: it ran nothing),
  // whatever record_iterations says: a timeline's window.
  [[nodiscard]] const rl::IterationPoint& last_iteration() const { return last_; }
  [[nodiscard]] Transformer& model() { return model_; }
  // Zeroes every slot's K and V, with no request running. A decode reads the
  // whole cache length and masks what is past a row's tokens, but 0 x NaN is
  // NaN: K and V left by weights that made NaN would poison every later
  // request's attention, on any weights. A weight load calls it.
  void clear_cache();
  // Tags the iterations recorded from now on (IterationPoint::beside_train).
  void set_beside_train(bool beside) { beside_train_ = beside; }

  // The sampling rule, public for tests: a draw from (seed, index).
  static std::int32_t sample(const torch::Tensor& logits_row, double temperature, double top_p, std::uint64_t seed, std::int64_t index,
                             float* logprob);

 private:
  struct Slot {
    bool active = false;
    GenRequest req;
    RequestSampling sampling;
    std::vector<std::int32_t> seq;  // context + new tokens
    std::int64_t cached = 0;        // tokens whose K/V are in the cache
    std::int64_t admitted = 0;      // admission order, to report finishes in it
    bool fresh = false;             // sampled its first token at admission: no decode this iteration
    GenResult out;
  };
  // Admits from the queue; describes the prefill in `point`.
  void admit(rl::IterationPoint& point);
  bool take_token(Slot& s, const torch::Tensor& logits_row);

  Transformer model_;
  EngineOptions opt_;
  KvCache cache_;
  std::unique_ptr<DecodeGraph> decode_;
  std::vector<Slot> slots_;
  std::deque<std::pair<GenRequest, RequestSampling>> queue_;
  std::int64_t admissions_ = 0;
  EngineStats stats_;
  std::vector<rl::IterationPoint> log_;
  rl::IterationPoint last_;
  bool beside_train_ = false;
};

}  // namespace april::live
