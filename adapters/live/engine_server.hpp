#pragma once
// The live engine as a server's core (`april serve`): a Hugging Face
// checkpoint on a continuous-batching KV engine stepped by one thread of its
// own, with requests submitted and aborted from any thread (the HTTP
// handlers). Each request is answered through a future, with its tokens, its
// log-probs and why it ended; an aborted one with what it had generated, as
// SGLang answers it (sglang_protocol.hpp). No torch in this header.
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/http/sglang_protocol.hpp"

namespace april::live {

struct EngineServerOptions {
  std::string checkpoint_dir;
  std::string device = "cpu";
  std::string dtype = "float32";    // the engine's: float32 or bfloat16
  std::int64_t slots = 64;          // requests decoded together; more wait in a queue
  std::int64_t context_length = 0;  // prompt + new tokens at most; 0: min(max_position_embeddings, 4096)
  std::int64_t threads = 1;         // torch intra-op threads
  // Prefill one token per iteration through the decode kernel: a request's
  // tokens are then the same whatever it is batched with, and a prompt that
  // ends in an aborted request's tokens continues it exactly (slower for
  // long prompts).
  bool exact_prefill = false;
  std::uint64_t seed = 0;  // a request without sampling_seed draws from (seed, its arrival number)
  std::string weight_version = "default";
};

struct EngineServerStatus {
  std::string architecture, checkpoint_dir, device, dtype, weight_version;
  std::int64_t parameters = 0, vocab = 0, context_length = 0, slots = 0;
  std::int64_t running = 0, waiting = 0, resident_tok = 0;
  bool paused = false;
  std::int64_t requests = 0, aborted = 0, prompt_tok = 0, generated_tok = 0, iterations = 0;
};

// A streamed request's output as the engine generates it (april serve's
// /v1/completions with stream true): the engine's thread appends after each
// iteration and notifies; the handler that streams it reads. The request's
// outcome (its future) is the whole output, of which this is a prefix.
struct TokenStream {
  std::mutex mu;
  std::condition_variable grew;   // also notified when the outcome is set
  std::vector<std::int32_t> ids;  // guarded by mu
  std::vector<float> logprobs;    // guarded by mu
};

class EngineServer {
 public:
  // Loads the checkpoint and starts the engine's thread. Throws
  // base::ConfigError for a checkpoint it cannot read.
  explicit EngineServer(const EngineServerOptions& options);
  // Aborts what is in flight (answered as aborted) and joins the thread.
  ~EngineServer();
  EngineServer(const EngineServer&) = delete;
  EngineServer& operator=(const EngineServer&) = delete;

  // Queues a request. std::invalid_argument (an HTTP 400) for an id past the
  // vocabulary, a prompt and max_new_tokens past the context length, or a
  // rid already in flight.
  // With `stream`, its tokens are also appended there as they come.
  std::future<http::GenerateOutcome> submit(const http::GenerateCall& call, std::shared_ptr<TokenStream> stream = nullptr);
  // Aborts every request whose rid starts with `call.rid` (all with
  // abort_all); returns how many. Their futures answer with the tokens they
  // had, finish reason abort.
  std::int64_t abort(const http::AbortCall& call);
  // SGLang's /update_weights_from_disk: loads the Hugging Face checkpoint at
  // `model_path` into the engine in place, at an iteration boundary with no
  // request running (abort_all_requests: after aborting them; else once
  // they have finished), holding new requests until it is done. The
  // checkpoint must have the served model's shapes. Returns "" on success,
  // else why not (the weights are then unchanged).
  struct WeightUpdate {
    std::string model_path;
    std::string weight_version;  // "" keeps the current one
    bool abort_all_requests = false;
  };
  std::string update_weights_from_disk(const WeightUpdate& update);
  // SGLang's /pause_generation: the engine stops at its next iteration
  // boundary, and new requests wait, until resume(). abort_in_flight (mode
  // "abort", SGLang's default) first answers every request in flight as
  // aborted, with its partial output; otherwise (mode "in_place") they keep
  // their KV and go on when resumed.
  void pause(bool abort_in_flight);
  // For a shutdown: new requests are refused (503), and every request in
  // flight or held is answered as aborted, with what it had generated.
  void close();
  // Whether close() was called: a request refused now is refused for that.
  [[nodiscard]] bool closed() const;
  void resume();
  [[nodiscard]] EngineServerStatus status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace april::live
