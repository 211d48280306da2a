#include "adapters/live/engine_server.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "adapters/live/cpu_runtime.hpp"
#include "adapters/live/detail/device.hpp"
#include "adapters/live/detail/hf_checkpoint.hpp"
#include "adapters/live/detail/kv_engine.hpp"
#include "base/hash.hpp"

namespace april::live {
namespace {

// SGLang treats a temperature below this as greedy (sampling_params.py).
constexpr double kGreedyBelow = 1e-6;
constexpr std::int64_t kDefaultContext = 4096;

}  // namespace

struct EngineServer::Impl {
  struct Pending {
    std::uint64_t key = 0;
    http::GenerateCall call;
    std::promise<http::GenerateOutcome> reply;
    std::chrono::steady_clock::time_point arrived;
    std::shared_ptr<TokenStream> stream;
  };
  struct PendingAbort {
    http::AbortCall call;
    std::promise<std::int64_t> done;
  };
  struct PendingUpdate {
    WeightUpdate update;
    std::promise<std::string> done;
  };
  struct Active {
    http::GenerateCall call;
    std::promise<http::GenerateOutcome> reply;
    std::chrono::steady_clock::time_point arrived;
    std::shared_ptr<TokenStream> stream;
  };

  EngineServerOptions opt;
  EngineServerStatus st;  // guarded by mu (the engine thread refreshes its counters)
  std::unique_ptr<KvEngine> engine;
  std::vector<std::int32_t> eos;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> pending;
  std::deque<PendingAbort> aborts;
  std::optional<PendingUpdate> update;  // one at a time (guarded by mu)
  torch::Device device{torch::kCPU};
  torch::ScalarType dtype = torch::kFloat32;
  std::map<std::string, std::uint64_t> rids_in_flight;  // submitted and not answered (guarded by mu)
  std::uint64_t next_key = 0;
  bool stopping = false;
  bool closed = false;                     // close(): new requests refused
  std::map<std::uint64_t, Active> active;  // the engine thread's own
  std::thread thread;

  explicit Impl(const EngineServerOptions& o) : opt(o) {
    configure_runtime(o.threads);
    device = parse_device(o.device);
    dtype = o.dtype == "bfloat16" ? torch::kBFloat16 : torch::kFloat32;
    if (o.dtype != "float32" && o.dtype != "bfloat16")
      throw std::invalid_argument(fmt::format("--dtype '{}': float32 or bfloat16", o.dtype));
    const auto cfg = read_hf_config(o.checkpoint_dir);
    auto context = o.context_length > 0
                       ? o.context_length
                       : std::min(kDefaultContext, cfg.max_position_embeddings > 0 ? cfg.max_position_embeddings : kDefaultContext);
    if (cfg.max_position_embeddings > 0 && context > cfg.max_position_embeddings) {
      throw std::invalid_argument(
          fmt::format("--context-length {} is past the model's max_position_embeddings ({})", context, cfg.max_position_embeddings));
    }
    auto ck = load_hf_checkpoint(o.checkpoint_dir, context, device, dtype);
    for (const auto id : ck.config.eos_token_ids) eos.push_back(static_cast<std::int32_t>(id));
    EngineOptions e;
    e.slots = o.slots;
    e.temperature = 1.0;
    e.exact_prefill = o.exact_prefill;
    e.eos = eos;
    e.device = device;
    e.dtype = dtype;
    // A graph captured for the engine's slots replays every decode (CUDA only).
    e.cuda_graph = device.is_cuda();
    ck.model->eval();
    engine = std::make_unique<KvEngine>(ck.model, e);
    st.architecture = ck.config.model.architecture;
    st.checkpoint_dir = o.checkpoint_dir;
    st.device = device.str();
    st.dtype = o.dtype;
    st.weight_version = o.weight_version;
    st.parameters = ck.config.model.parameters();
    st.vocab = ck.config.model.vocab;
    st.context_length = context;
    st.slots = o.slots;
    thread = std::thread([this] { run(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
  }

  void answer(std::uint64_t key, const GenResult& r, http::FinishKind kind, const std::string& message) {
    auto it = active.find(key);
    if (it == active.end()) return;
    http::GenerateOutcome out;
    out.rid = it->second.call.rid;
    out.output_ids = r.tokens;
    out.output_logprobs = r.logprobs;
    out.finish = kind;
    out.matched_stop = r.stop_token;
    out.abort_message = message;
    out.prompt_tokens = static_cast<std::int64_t>(it->second.call.input_ids.size());
    out.return_logprob = it->second.call.return_logprob;
    out.e2e_latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.arrived).count();
    {
      std::lock_guard<std::mutex> lock(mu);
      out.weight_version = st.weight_version;
      rids_in_flight.erase(out.rid);
      st.generated_tok += static_cast<std::int64_t>(r.tokens.size());
      if (kind == http::FinishKind::Abort) ++st.aborted;
    }
    it->second.reply.set_value(std::move(out));
    if (const auto stream = it->second.stream) {
      { std::lock_guard<std::mutex> lock(stream->mu); }
      stream->grew.notify_all();
    }
    active.erase(it);
  }

  // The streamed requests' new tokens, after an iteration.
  void publish_streams() {
    if (std::none_of(active.begin(), active.end(), [](const auto& a) { return a.second.stream != nullptr; })) return;
    engine->visit_running([this](const GenResult& r) {
      const auto it = active.find(r.key);
      if (it == active.end() || !it->second.stream) return;
      auto& stream = *it->second.stream;
      {
        std::lock_guard<std::mutex> lock(stream.mu);
        const auto sent = stream.ids.size();
        if (r.tokens.size() <= sent || r.logprobs.size() != r.tokens.size()) return;
        const auto from = static_cast<std::ptrdiff_t>(sent);
        stream.ids.insert(stream.ids.end(), r.tokens.begin() + from, r.tokens.end());
        stream.logprobs.insert(stream.logprobs.end(), r.logprobs.begin() + from, r.logprobs.end());
      }
      stream.grew.notify_all();
    });
  }

  // Aborts the matching requests in the engine, and those held before it
  // (sent while paused or while a weight update waits), which answer with
  // no tokens.
  std::int64_t apply_abort(const http::AbortCall& a, const std::string& message) {
    const auto matches = [&a](const std::string& rid) {
      return a.abort_all || (!a.rid.empty() && (a.exact ? rid == a.rid : rid.rfind(a.rid, 0) == 0));
    };
    std::vector<std::uint64_t> keys;
    for (const auto& [key, act] : active) {
      if (matches(act.call.rid)) keys.push_back(key);
    }
    for (const auto key : keys) {
      if (auto r = engine->abort(key)) answer(key, *r, http::FinishKind::Abort, message);
    }
    std::deque<Pending> held;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (auto it = pending.begin(); it != pending.end();) {
        if (matches(it->call.rid)) {
          held.push_back(std::move(*it));
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& p : held) {
      GenResult none;
      none.key = p.key;
      active.emplace(p.key, Active{std::move(p.call), std::move(p.reply), p.arrived, std::move(p.stream)});
      answer(p.key, none, http::FinishKind::Abort, message);
    }
    return static_cast<std::int64_t>(keys.size() + held.size());
  }

  // The checkpoint into the engine's weights, in place (a captured decode
  // graph reads the same storage). "" or why not.
  std::string load_weights(const WeightUpdate& u) {
    try {
      auto ck = load_hf_checkpoint(u.model_path, st.context_length, device, dtype);
      const auto& now = engine->model()->config();
      const auto& next = ck.model->config();
      if (next.architecture != now.architecture || next.vocab != now.vocab || next.d_model != now.d_model ||
          next.n_layers != now.n_layers || next.n_heads != now.n_heads || next.n_kv_heads != now.n_kv_heads || next.d_ff != now.d_ff ||
          next.head_dim() != now.head_dim() || next.tie_embeddings != now.tie_embeddings || next.qk_norm != now.qk_norm ||
          next.qkv_bias != now.qkv_bias || next.norm_eps != now.norm_eps || next.rope_theta != now.rope_theta) {
        return fmt::format("{} holds another model ({}, {} layers, hidden {}) than the one served ({}, {} layers, hidden {})", u.model_path,
                           next.architecture, next.n_layers, next.d_model, now.architecture, now.n_layers, now.d_model);
      }
      // Every parameter there with its shape before one is overwritten: a
      // copy that failed halfway would leave mixed weights.
      const auto from = ck.model->named_parameters();
      const auto to = engine->model()->named_parameters();
      if (from.size() != to.size()) return fmt::format("{} has {} parameters, the served model {}", u.model_path, from.size(), to.size());
      for (const auto& p : to) {
        const auto* q = from.find(p.key());
        if (q == nullptr || q->sizes() != p.value().sizes())
          return fmt::format("{}: parameter {} is missing or of another shape", u.model_path, p.key());
      }
      torch::NoGradGuard no_grad;
      copy_weights(ck.model, engine->model());
      engine->clear_cache();
      if (device.is_cuda()) torch::cuda::synchronize();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

  void run() {
    for (;;) {
      std::deque<Pending> adds;
      std::deque<PendingAbort> cuts;
      bool stop = false, updating = false, hold = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        // What /v1/loads and /flush_cache read, fresh before every wait: a
        // client polling for idle after an abort must see the engine empty.
        st.running = static_cast<std::int64_t>(engine->running());
        st.waiting = static_cast<std::int64_t>(engine->waiting());
        st.resident_tok = engine->resident_tok();
        st.iterations = engine->stats().iterations;
        cv.wait(lock, [&] {
          return stopping || !aborts.empty() || update.has_value() ||
                 (!st.paused && (!pending.empty() || engine->running() > 0 || engine->waiting() > 0));
        });
        updating = update.has_value();
        hold = st.paused;
        // New requests wait while an update is pending (they run on the new
        // weights) and while paused.
        if (!updating && !hold) adds.swap(pending);
        cuts.swap(aborts);
        stop = stopping;
      }
      // Submissions first: an abort sent after a submission finds it.
      for (auto& p : adds) {
        GenRequest g;
        g.key = p.key;
        g.context = p.call.input_ids;
        g.max_new = static_cast<std::int32_t>(p.call.max_new_tokens);
        g.seed = p.call.sampling_seed.value_or(base::combine_seeds(opt.seed, p.key));
        RequestSampling s;
        s.temperature = p.call.temperature < kGreedyBelow ? 0.0 : p.call.temperature;
        s.top_p = p.call.top_p;
        s.stop_tokens = p.call.stop_token_ids;
        s.ignore_eos = p.call.ignore_eos;
        active.emplace(p.key, Active{std::move(p.call), std::move(p.reply), p.arrived, std::move(p.stream)});
        try {
          engine->add(std::move(g), std::move(s));
        } catch (const std::exception& e) {
          GenResult none;
          none.key = p.key;
          answer(p.key, none, http::FinishKind::Abort, std::string("not admitted: ") + e.what());
        }
      }
      for (auto& c : cuts) c.done.set_value(apply_abort(c.call, "Abort requested"));
      if (stop) {
        apply_abort({"", true}, "The server is shutting down");
        std::lock_guard<std::mutex> lock(mu);
        if (update) update->done.set_value("the server is shutting down");
        update.reset();
        return;
      }
      if (updating) {
        std::unique_lock<std::mutex> lock(mu);
        const auto u = update->update;
        lock.unlock();
        if (u.abort_all_requests) apply_abort({"", true}, "Abort for a weight update");
        if (engine->running() == 0 && engine->waiting() == 0) {
          const auto why = load_weights(u);
          lock.lock();
          if (why.empty() && !u.weight_version.empty()) st.weight_version = u.weight_version;
          update->done.set_value(why);
          update.reset();
          continue;
        }
        if (hold) {
          // Paused in place, they would never finish.
          lock.lock();
          update->done.set_value("requests are paused in place: /continue_generation first, or set abort_all_requests");
          update.reset();
          continue;
        }
      }
      if (hold) continue;
      if (engine->running() == 0 && engine->waiting() == 0) continue;
      std::vector<GenResult> done;
      try {
        done = engine->step();
      } catch (const std::exception& e) {
        // Nothing more can be served: every request in flight is answered
        // with the error rather than left waiting.
        apply_abort({"", true}, std::string("the engine failed: ") + e.what());
        continue;
      }
      publish_streams();
      for (const auto& r : done) answer(r.key, r, r.stop_token >= 0 ? http::FinishKind::Stop : http::FinishKind::Length, "");
    }
  }
};

EngineServer::EngineServer(const EngineServerOptions& options) : impl_(std::make_unique<Impl>(options)) {}
EngineServer::~EngineServer() = default;

std::future<http::GenerateOutcome> EngineServer::submit(const http::GenerateCall& call, std::shared_ptr<TokenStream> stream) {
  auto& im = *impl_;
  const auto vocab = im.st.vocab;
  if (call.input_ids.empty()) throw std::invalid_argument("input_ids: an empty prompt");
  if (call.max_new_tokens < 1) throw std::invalid_argument("max_new_tokens: at least 1");
  for (const auto id : call.input_ids) {
    if (id < 0 || id >= vocab)
      throw std::invalid_argument(fmt::format("input_ids: token {} is outside the model's vocabulary of {}", id, vocab));
  }
  for (const auto id : call.stop_token_ids) {
    if (id < 0 || id >= vocab)
      throw std::invalid_argument(fmt::format("stop_token_ids: token {} is outside the model's vocabulary of {}", id, vocab));
  }
  const auto total = static_cast<std::int64_t>(call.input_ids.size()) + call.max_new_tokens;
  if (total > im.st.context_length) {
    throw std::invalid_argument(fmt::format("{} prompt tokens and max_new_tokens {} are {} tokens, past the context length of {}",
                                            call.input_ids.size(), call.max_new_tokens, total, im.st.context_length));
  }
  Impl::Pending p;
  p.call = call;
  p.arrived = std::chrono::steady_clock::now();
  p.stream = std::move(stream);
  auto reply = p.reply.get_future();
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (im.stopping || im.closed) throw std::runtime_error("the server is shutting down");
    p.key = im.next_key++;
    if (p.call.rid.empty()) p.call.rid = fmt::format("april-{}", p.key);
    if (!im.rids_in_flight.emplace(p.call.rid, p.key).second) {
      throw std::invalid_argument(fmt::format("rid '{}' is already in flight", p.call.rid));
    }
    ++im.st.requests;
    im.st.prompt_tok += static_cast<std::int64_t>(call.input_ids.size());
    im.pending.push_back(std::move(p));
  }
  im.cv.notify_all();
  return reply;
}

std::int64_t EngineServer::abort(const http::AbortCall& call) {
  auto& im = *impl_;
  std::future<std::int64_t> done;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (im.stopping) return 0;
    im.aborts.push_back({call, {}});
    done = im.aborts.back().done.get_future();
  }
  im.cv.notify_all();
  return done.get();
}

std::string EngineServer::update_weights_from_disk(const WeightUpdate& u) {
  auto& im = *impl_;
  std::future<std::string> done;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (im.stopping) return "the server is shutting down";
    if (im.update) return "another weight update is in progress";
    im.update.emplace();
    im.update->update = u;
    done = im.update->done.get_future();
  }
  im.cv.notify_all();
  return done.get();
}

void EngineServer::close() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->closed = true;
    impl_->st.paused = false;  // held requests are answered by the abort below, not left waiting
  }
  impl_->cv.notify_all();
  (void)abort({"", true});
}

bool EngineServer::closed() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->closed || impl_->stopping;
}

void EngineServer::pause(bool abort_in_flight) {
  auto& im = *impl_;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.st.paused = true;
  }
  im.cv.notify_all();
  if (abort_in_flight) (void)abort({"", true});
}

void EngineServer::resume() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->st.paused = false;
  }
  impl_->cv.notify_all();
}

EngineServerStatus EngineServer::status() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto s = impl_->st;
  // Requests held before the engine (paused, or behind a weight update) wait too.
  s.waiting += static_cast<std::int64_t>(impl_->pending.size());
  return s;
}

}  // namespace april::live
