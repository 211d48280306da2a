#pragma once
// A fleet of inference servers behind the Backend interface, driven over
// SGLang's HTTP API (sglang_protocol.hpp) as slime drives it: each sample a
// POST /generate with the prompt's ids (plus its earlier tokens when it
// resumes, max_new_tokens reduced), routed to the server with the fewest
// requests outstanding; an abort is POST /abort_request {"abort_all": true}
// to every server, whose open requests then answer with their partial
// tokens. Works against SGLang and `april serve` alike. Or over vLLM's
// OpenAI-compatible API (ServerApi::kVllm): each sample a streamed
// /v1/completions, an abort the close of every open stream, whose ids
// received so far are the partial tokens (http_stream.hpp). What differs
// between the two is the API's ServerDialect (server_dialect.hpp).
//
// Without a trainer the run is rollout only: the servers' weights stay, a
// train step computes the task's rewards for its batch, and a weight sync
// changes only the version. With one (HttpBackendOptions::trainer), a train
// step trains on the batch, and a sync writes the trainer's weights to
// weights_dir/v<version> and has every server load them through
// /update_weights_from_disk (SGLang's disk path), then removes the folder of
// the version before. Colocated policies take turns (rollout, train, sync);
// overlapped ones train and sync beside the rollout. Plain C++: no torch.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "adapters/live/server_dialect.hpp"
#include "adapters/live/weights_trainer.hpp"
#include "base/config.hpp"
#include "rl/backend.hpp"
#include "rl/run_timeline.hpp"
#include "tasks/live_task.hpp"

namespace april::live {

struct HttpBackendOptions {
  std::vector<std::string> urls;       // http://host:port, one per server
  ServerApi api = ServerApi::kSglang;  // the API they speak (server_dialect.hpp)
  // Requests sent to a server at once: 0 takes what it says
  // (/get_server_info's max_running_requests; vLLM says nothing: no bound).
  std::int64_t slots = 0;
  double temperature = 1.0;
  double top_p = 1.0;
  std::uint64_t seed = 0;          // each sample's sampling_seed is drawn from (seed, its key)
  double request_timeout_s = 600;  // a /generate that does not answer in this long fails the step
  double connect_timeout_s = 5;
  WeightsTrainer* trainer = nullptr;  // none: rollout only
  std::string weights_dir;            // with a trainer: an existing folder the servers can read, which april may write into
  // A server that stops answering (no connection after three tries, a
  // connection cut before a whole reply, no reply within the timeout) is
  // dropped for the rest of the run, and its requests go again to the
  // servers left, from the tokens their samples held when sent; on_lost is
  // told (its URL and why). Off, or with no server left, the step fails
  // naming it. An HTTP error or a malformed reply always fails the step: the
  // server answered, and what it said is wrong.
  bool failover = false;
  std::function<void(const std::string& url, const std::string& why, std::int64_t moved, std::int64_t servers_left)> on_lost;
  // Each server's requests outstanding at every change (take_engine_changes),
  // on now_s()'s clock: the engine tracks of a timeline, one per server.
  bool record_changes = false;
};

// The options' sampling from a scenario: live.temperature, live.top_p and
// the seed. `april live --engines` and `april validate --engines` both start
// from these, so that they sample alike.
HttpBackendOptions http_backend_options(const base::Config& c);

class HttpBackend final : public rl::Backend, public rl::OverlappingBackend {
 public:
  // Asks every server for /get_server_info (its slots) and refuses, naming
  // the URL, one that does not answer. The task must outlive the backend.
  HttpBackend(HttpBackendOptions options, const LiveTask& task);
  ~HttpBackend() override;
  HttpBackend(const HttpBackend&) = delete;
  HttpBackend& operator=(const HttpBackend&) = delete;

  [[nodiscard]] double now_s() const override;
  [[nodiscard]] std::int64_t engines() const override;
  [[nodiscard]] std::int64_t max_running_per_engine() const override;
  // A reply that stopped at the request's max_new_tokens (finish reason
  // "length") says so: chunked requests (seer.chunk_tok) run over HTTP. Each
  // chunk is a new request; whether its context is prefilled again is the
  // server's prefix cache's business, whatever chunk_keeps_kv says.
  [[nodiscard]] bool reports_chunk_ends() const override { return true; }
  // A request pinned to a range of servers (SubmissionPlan::engines,
  // StreamRL's pools) goes to the least loaded of them, or waits for one;
  // a range whose servers are all lost widens to every server.
  [[nodiscard]] bool routes_within_engine_ranges() const override { return true; }
  void submit(const rl::SampleRequest& request) override;
  // Throws std::runtime_error naming the server's URL and what went wrong
  // (no answer after three tries, a timeout, an HTTP error with its message,
  // a malformed reply): the step fails, nothing of it is recorded.
  std::vector<rl::SampleProgress> wait_for_completions() override;
  std::vector<rl::SampleProgress> abort_all() override;
  rl::TrainReport train(const std::vector<rl::TrainSample>& batch, std::int64_t version) override;
  void sync_weights(std::int64_t new_version) override;
  [[nodiscard]] rl::BackendCounters counters() const override;

  // Overlapped policies (one_step_off, async; docs/design.md 3b): the trainer
  // computes on a thread of its own while the servers generate. A sync
  // writes the weights and has every server load them: with `recompute`
  // (AReaL's interruptible rollout) every request is aborted first, keeping
  // its tokens, and sent again from prompt + tokens once the servers hold
  // the new weights; without it the servers' own update runs (an SGLang
  // server lets the requests it runs finish under the old weights, then
  // loads), so every token's version is known either way. What the loop
  // submits during a sync is sent when it ends. Rollout only, a train step
  // scores its batch and a sync changes the version alone.
  [[nodiscard]] rl::OverlappingBackend* overlapping() override { return this; }
  void start_train(const std::vector<rl::TrainSample>& batch, std::int64_t version, std::int64_t local_steps) override;
  void start_sync(std::int64_t new_version, bool recompute) override;
  rl::BackendEvents wait_for_events() override;

  // A colocated run's checkpoint between steps (--save, --resume): the
  // samples held (an APRIL run's partial ones with their tokens and
  // log-probs), the servers' weight version and, with a trainer, its
  // weights and optimizer. load() has every server load the trainer's
  // weights as that version (weights_dir/v<version>), so that a server
  // restarted on the original checkpoint continues from the saved policy.
  // save() throws std::logic_error with requests in flight or a train step
  // or sync running; load() a runtime_error naming the file or the server.
  void save(const std::string& dir) const;
  void load(const std::string& dir);

  // The folder of the weights every server loaded last (weights_dir/v<version>),
  // or "" before the first sync: what --export copies. A train step still
  // running beside the servers (an overlapped policy) does not touch it.
  [[nodiscard]] std::string loaded_weights_dir() const;

  // The tokens a sample holds (tests).
  [[nodiscard]] std::vector<std::int32_t> sample_tokens(rl::SampleKey key) const;
  // Each server's outstanding requests (as `running`) at every change since
  // the last call, when HttpBackendOptions::record_changes.
  std::vector<rl::EngineRunningChange> take_engine_changes();
  // Servers dropped by failover so far.
  [[nodiscard]] std::int64_t servers_lost() const;
  // Requests answered so far, and how many of them were aborted.
  [[nodiscard]] std::int64_t requests_answered() const;
  [[nodiscard]] std::int64_t requests_aborted() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace april::live
