#pragma once
// What differs between the HTTP APIs that april's clients of an inference
// server (live::HttpBackend, the HTTP profiler) speak, one ServerDialect per
// API, picked once from ServerApi (server_dialect()); the clients call it
// and never ask which API it is.
//  - SGLang's native API, which april serve speaks too (sglang_dialect.cpp):
//    POST /generate with input_ids and sampling_params, POST /abort_request
//    {"abort_all": true}, GET /get_server_info, POST
//    /update_weights_from_disk, and its Prometheus gauge
//    sglang:num_running_reqs;
//  - vLLM's OpenAI-compatible API (vllm_dialect.cpp): a streamed POST
//    /v1/completions of the prompt's token ids naming the model that GET
//    /v1/models lists, aborted by closing the stream (its only abort outside
//    dev mode), no weight load, and its Prometheus gauge
//    vllm:num_requests_running.
// The bodies' fields are those adapters/http parses as the servers do
// (sglang_protocol.hpp, openai_protocol.hpp). A dialect holds no state.
// Plain C++: no torch.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace april::http {
struct GenerateReply;
}  // namespace april::http

namespace april::live {

class StreamCancel;

// Which HTTP API the servers speak.
//  - kSglang: SGLang's native /generate and /abort_request (and april serve's);
//  - kVllm: vLLM's OpenAI-compatible /v1/completions, streamed, aborted by
//    closing the stream (its only abort outside dev mode), rollout only.
enum class ServerApi { kSglang, kVllm };

// What the backend reads of a server before its first request: the requests
// it runs at once (0: no bound stated) and the model a request names ("" where
// the API names none).
struct ServerSeat {
  std::int64_t slots = 0;
  std::string model;
};

// What the profiler reads of a server: its slots, context, the checkpoint it
// serves (what a weight load reloads) and its name.
struct ServerFacts {
  std::int64_t slots = 0, context_tok = 0;
  std::string model_path, name;
};

// One rollout request: the prompt's ids and the sample's tokens so far, up
// to max_new_tok more, sampled as the run says.
struct SampleSpec {
  std::vector<std::int32_t> ids;
  std::int32_t max_new_tok = 0;
  double temperature = 1.0, top_p = 1.0;
  std::uint64_t seed = 0;
  std::vector<std::int32_t> stop_token_ids;
};

class ServerDialect {
 public:
  virtual ~ServerDialect() = default;

  // How a run names the API to its user: "SGLang's HTTP API", "vLLM's /v1/completions".
  [[nodiscard]] virtual const char* name() const = 0;
  // The route a request for tokens goes to.
  [[nodiscard]] virtual const char* generate_route() const = 0;

  // The backend's look at `url` before its first request, with `slots_given`
  // (0: what the server says) and the connect timeout; throws
  // std::runtime_error naming the URL when the server answers otherwise
  // than the API says.
  [[nodiscard]] virtual ServerSeat seat(const std::string& url, std::int64_t slots_given, double connect_s) const = 0;
  // The profiler's; throws std::runtime_error naming the URL, or
  // std::invalid_argument where the slots must be given and are not.
  [[nodiscard]] virtual ServerFacts facts(const std::string& url, std::int64_t slots_given) const = 0;

  // A rollout request's body, without its request id (name_request).
  [[nodiscard]] virtual nlohmann::json sample_body(const SampleSpec& spec) const = 0;
  // A profile request's body: greedy, exactly `max_new` tokens, named `rid`.
  [[nodiscard]] virtual nlohmann::json profile_body(const std::vector<std::int32_t>& ids, std::int64_t max_new, const std::string& rid,
                                                    const ServerFacts& facts) const = 0;
  // Names the request `id` on its server, which serves `model` (seat()'s).
  virtual void name_request(nlohmann::json& body, const std::string& id, const std::string& model) const = 0;

  // A rollout request sent to `url` and read to its end, tried again
  // (with an id of its own) when it got no reply at all; throws NoReply and
  // TimedOut as post_or_throw does, and std::runtime_error naming the URL
  // for an HTTP error or a reply that cannot be read. `cancel` closes it
  // where the API aborts so (its reply then holds the tokens received).
  [[nodiscard]] virtual http::GenerateReply generate(const std::string& url, const nlohmann::json& body, double connect_s, double read_s,
                                                     StreamCancel& cancel) const = 0;
  // A whole reply of generate_route(), as sent without streaming.
  [[nodiscard]] virtual http::GenerateReply parse_reply(const std::string& text, const std::string& source) const = 0;
  // The profiler's request that an abort stops: sent once and read to its
  // end, its reply not read.
  virtual void run_abortable(const std::string& url, const nlohmann::json& body, double connect_s, double read_s,
                             StreamCancel& cancel) const = 0;

  // The abort of every request `url` runs, as its server takes it (nothing
  // where the API aborts by closing each request's stream, `cancel` above).
  // Throws as post_or_throw does.
  virtual void abort_server(const std::string& url, double connect_s, double read_s) const = 0;
  // Whether an abort ends a request at the client before its server has
  // freed it (a closed stream), so that the server's own count of the
  // requests it runs says when the abort is done.
  [[nodiscard]] virtual bool abort_ends_at_the_client() const = 0;
  // The Prometheus gauge (GET /metrics) of the requests a server runs, summed over its labels.
  [[nodiscard]] virtual const char* running_requests_metric() const = 0;

  // The route that has a server load a checkpoint from disk, or nullptr where the API has none.
  [[nodiscard]] virtual const char* weight_load_route() const = 0;
  // Why a run cannot train over the API ("" where it can).
  [[nodiscard]] virtual std::string training_refusal() const = 0;
};

// SGLang's, vLLM's.
const ServerDialect& sglang_dialect();
const ServerDialect& vllm_dialect();

// The dialect of `api`: the one place that tells the APIs apart.
inline const ServerDialect& server_dialect(ServerApi api) {
  switch (api) {
    case ServerApi::kVllm:
      return vllm_dialect();
    case ServerApi::kSglang:
      break;
  }
  return sglang_dialect();
}

}  // namespace april::live
