#include "cli/serve_openai_routes.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "adapters/http/openai_protocol.hpp"
#include "base/config.hpp"

namespace april::cli {
namespace {

// How long a streaming handler waits for tokens before it looks again
// whether its client is still there.
constexpr auto kStreamPoll = std::chrono::milliseconds(5);

// One streamed completion between calls of its content provider.
struct StreamState {
  std::unique_ptr<OpenRequests::Hold> hold;  // released with the response, written whole
  std::shared_ptr<live::TokenStream> tokens;
  std::shared_future<http::GenerateOutcome> outcome;
  http::CompletionChunk chunk;  // id, model, created, logprobs: the same in every event
  std::int64_t prompt_tok = 0;
  bool include_usage = false;
  std::size_t sent = 0;
};

// One call of the provider: what the engine generated since the last,
// written as an event; at the end the finish reason, the usage and
// [DONE]. A client that left (its socket closed, or a write failed) has
// its request aborted in the engine, as vLLM aborts a request whose
// connection closes.
bool stream_step(StreamState& s, live::EngineServer& engine, httplib::DataSink& sink) {
  const auto client_left = [&] {
    (void)engine.abort({s.chunk.id, false, true});
    return false;
  };
  if (!sink.is_writable()) return client_left();
  bool ready = false;
  {
    std::unique_lock<std::mutex> lock(s.tokens->mu);
    s.tokens->grew.wait_for(lock, kStreamPoll, [&] {
      return s.tokens->ids.size() > s.sent || s.outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
    ready = s.outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    if (!ready && s.tokens->ids.size() > s.sent) {
      const auto from = static_cast<std::ptrdiff_t>(s.sent);
      s.chunk.delta_ids.assign(s.tokens->ids.begin() + from, s.tokens->ids.end());
      s.chunk.delta_logprobs.assign(s.tokens->logprobs.begin() + from, s.tokens->logprobs.end());
    } else {
      s.chunk.delta_ids.clear();
    }
  }
  if (!ready) {
    if (s.chunk.delta_ids.empty()) return true;
    s.sent += s.chunk.delta_ids.size();
    const auto event = http::completion_chunk_event(s.chunk);
    return sink.write(event.data(), event.size()) ? true : client_left();
  }
  // The outcome holds the whole output: what the events have not carried goes in the last.
  const auto& out = s.outcome.get();
  const auto from = static_cast<std::ptrdiff_t>(std::min(s.sent, out.output_ids.size()));
  s.chunk.delta_ids.assign(out.output_ids.begin() + from, out.output_ids.end());
  s.chunk.delta_logprobs.assign(out.output_logprobs.begin() + std::min<std::ptrdiff_t>(from, static_cast<std::ptrdiff_t>(out.output_logprobs.size())),
                                out.output_logprobs.end());
  s.chunk.finish = out.finish;
  s.chunk.matched_stop = out.matched_stop;
  std::string events = http::completion_chunk_event(s.chunk);
  if (s.include_usage) {
    events += http::completion_usage_event(s.chunk.id, s.chunk.model, s.chunk.created_s, s.prompt_tok,
                                           static_cast<std::int64_t>(out.output_ids.size()));
  }
  events += http::kStreamDone;
  if (!sink.write(events.data(), events.size())) return false;
  // The hold on the bound goes with the response, once written whole: a
  // shutdown waits for it before the listener closes.
  sink.done();
  return true;
}

}  // namespace

void add_openai_routes(HttpServer& svr, live::EngineServer& engine, OpenRequests& open) {
  auto next_id = std::make_shared<std::atomic<std::uint64_t>>(0);
  svr.Get("/v1/models", [&engine](const httplib::Request&, httplib::Response& res) {
    const auto s = engine.status();
    // vLLM names a model by the path it was served from, unless given a name.
    reply_json(res, 200,
               nlohmann::json{{"object", "list"},
                              {"data",
                               {{{"id", s.checkpoint_dir},
                                 {"object", "model"},
                                 {"created", static_cast<std::int64_t>(std::time(nullptr))},
                                 {"owned_by", "april"},
                                 {"root", s.checkpoint_dir},
                                 {"max_model_len", s.context_length}}}}}
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
  svr.post_with_body("/v1/completions", [&engine, &open, next_id](const httplib::Request&, const std::string& body, httplib::Response& res) {
    http::CompletionCall call;
    try {
      call = http::parse_completion_call(body, "POST /v1/completions");
    } catch (const base::ConfigError& e) {
      return reply_error(res, 400, e.what());
    }
    // vLLM answers a model it does not serve with 404 (NotFoundError), not by
    // serving its own: a client naming the wrong server learns so.
    if (!call.model.empty() && call.model != engine.status().checkpoint_dir) {
      return reply_error(res, 404, fmt::format("POST /v1/completions: the model `{}` does not exist (this server serves `{}`, GET /v1/models)",
                                               call.model, engine.status().checkpoint_dir));
    }
    if (call.generate.rid.empty()) call.generate.rid = fmt::format("cmpl-april-{}", next_id->fetch_add(1));
    auto hold = std::unique_ptr<OpenRequests::Hold>(new OpenRequests::Hold(open.try_open()));
    if (!hold->held()) {
      return reply_error(res, 503,
                         fmt::format("POST /v1/completions: {}", engine.closed() ? "the server is shutting down" : queue_full(open.max())));
    }
    auto tokens = call.stream ? std::make_shared<live::TokenStream>() : nullptr;
    std::future<http::GenerateOutcome> outcome;
    try {
      outcome = engine.submit(call.generate, tokens);
    } catch (const std::invalid_argument& e) {
      return reply_error(res, 400, fmt::format("POST /v1/completions: {}", e.what()));
    } catch (const std::exception& e) {
      return reply_error(res, 503, fmt::format("POST /v1/completions: {}", e.what()));
    }
    http::CompletionChunk chunk;
    chunk.id = call.generate.rid;
    chunk.model = engine.status().checkpoint_dir;
    chunk.created_s = static_cast<std::int64_t>(std::time(nullptr));
    chunk.logprobs = call.logprobs;
    const auto prompt_tok = static_cast<std::int64_t>(call.generate.input_ids.size());
    if (!call.stream) {
      const auto out = outcome.get();
      chunk.delta_ids = out.output_ids;
      chunk.delta_logprobs = out.output_logprobs;
      chunk.finish = out.finish;
      chunk.matched_stop = out.matched_stop;
      return reply_json(res, 200, http::completion_reply_json(chunk, prompt_tok));
    }
    auto state = std::make_shared<StreamState>();
    state->hold = std::move(hold);
    state->tokens = std::move(tokens);
    state->outcome = outcome.share();
    state->chunk = std::move(chunk);
    state->prompt_tok = prompt_tok;
    state->include_usage = call.include_usage;
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [state, &engine](std::size_t, httplib::DataSink& sink) { return stream_step(*state, engine, sink); },
        [state, &engine](bool success) {
          // Ended before the outcome (a write failed, the server stops):
          // the request must not run on for nobody.
          if (!success && state->outcome.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            (void)engine.abort({state->chunk.id, false, true});
          }
        });
  });
}

}  // namespace april::cli
