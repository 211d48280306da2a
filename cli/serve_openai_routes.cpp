#include "cli/serve_openai_routes.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "adapters/http/openai_protocol.hpp"
#include "base/config.hpp"
#include "cli/serve_openai_choice.hpp"

namespace april::cli {
namespace {

// How long a handler waits for tokens before it looks again whether its
// client is still there.
constexpr auto kPoll = std::chrono::milliseconds(5);

void reply_openai_error(httplib::Response& res, int status, const std::string& message, const std::string& param = "") {
  reply_json(res, status, http::openai_error_json(status, message, param));
}

// A request refused by a field: the status, the message and the field.
struct Refusal {
  int status = 400;
  std::string message;
  std::string param;
};

// Every choice of one request, and what their events share.
struct Run {
  std::vector<std::unique_ptr<OpenRequests::Hold>> holds;  // released with the response, written whole
  std::vector<ChoiceRun> choices;
  http::CompletionChunk chunk;  // id, model, created, chat, logprobs
  std::int64_t prompt_tok = 0;
  bool include_usage = false;
  std::vector<bool> started;  // a chat choice's first event carries the role

  void abort_all(live::EngineServer& engine) {
    for (auto& c : choices) {
      if (!c.over()) (void)engine.abort({c.rid(), false, true});
    }
  }
  [[nodiscard]] bool over() const {
    for (const auto& c : choices) {
      if (!c.over()) return false;
    }
    return true;
  }
  [[nodiscard]] std::int64_t generated_tok() const {
    std::int64_t n = 0;
    for (const auto& c : choices) n += c.generated_tok();
    return n;
  }
};

// The prompt's ids: as sent, or the text through the tokenizer, or the
// messages through the chat template; then checked against the engine in
// the request's own field names (the engine's would say input_ids).
std::optional<Refusal> prepare(http::CompletionCall& call, const OpenAIText& text, const live::EngineServerStatus& st) {
  const auto& tok = text.tokenizer;
  const char* prompt_field = call.chat ? "messages" : "prompt";
  if (call.chat) {
    if (!text.chat) {
      return Refusal{400,
                     fmt::format("this server has no chat template: start april serve with --chat FAMILY ({})",
                                 fmt::join(hf::chat_family_names(), ", ")),
                     "messages"};
    }
    if (!tok)
      return Refusal{400, fmt::format("a chat needs the checkpoint's tokenizer.json, which {} does not have", st.checkpoint_dir),
                     "messages"};
    std::vector<hf::ChatMessage> messages;
    for (const auto& m : call.messages) messages.push_back({m.role, m.content});
    std::string rendered;
    try {
      rendered = hf::render_chat_messages(*text.chat, messages, call.enable_thinking);
    } catch (const base::ConfigError& e) {
      return Refusal{400, e.what(), call.enable_thinking ? "chat_template_kwargs.enable_thinking" : "messages"};
    }
    for (const auto id : tok->encode(rendered)) call.generate.input_ids.push_back(id);
    // The template's end of turn ends the answer, whatever the config's eos says.
    if (const auto end = tok->token_to_id(hf::chat_end_of_turn(*text.chat)); end && *end < st.vocab)
      call.generate.stop_token_ids.push_back(*end);
  } else if (call.prompt_text) {
    if (!tok) {
      return Refusal{
          400,
          fmt::format("a text prompt needs the checkpoint's tokenizer.json, which {} does not have: send token ids", st.checkpoint_dir),
          "prompt"};
    }
    for (const auto id : tok->encode(*call.prompt_text)) call.generate.input_ids.push_back(id);
  }
  if (!call.stop.empty() && !tok) {
    return Refusal{
        400,
        fmt::format("stop strings need the checkpoint's tokenizer.json, which {} does not have: send stop_token_ids", st.checkpoint_dir),
        "stop"};
  }
  auto& g = call.generate;
  if (g.input_ids.empty()) return Refusal{400, "the prompt has no tokens", prompt_field};
  for (const auto id : g.input_ids) {
    if (id >= st.vocab) return Refusal{400, fmt::format("token {} is outside the model's vocabulary of {}", id, st.vocab), prompt_field};
  }
  for (const auto id : g.stop_token_ids) {
    if (id >= st.vocab)
      return Refusal{400, fmt::format("token {} is outside the model's vocabulary of {}", id, st.vocab), "stop_token_ids"};
  }
  const auto prompt_tok = static_cast<std::int64_t>(g.input_ids.size());
  if (!call.max_tokens_given) g.max_new_tokens = st.context_length - prompt_tok;  // vLLM's default: the context left
  if (prompt_tok >= st.context_length || prompt_tok + g.max_new_tokens > st.context_length) {
    return Refusal{400,
                   fmt::format("this model's maximum context length is {} tokens; the request has {} prompt tokens and asks for {} more",
                               st.context_length, prompt_tok, std::max<std::int64_t>(g.max_new_tokens, 0)),
                   prompt_tok >= st.context_length ? prompt_field : (call.chat ? "max_completion_tokens" : "max_tokens")};
  }
  return std::nullopt;
}

// Writes what every choice generated since the last call; at the end the
// usage and [DONE]. A client that left (its socket closed, or a write
// failed) has its requests aborted in the engine, as vLLM aborts a request
// whose connection closes.
bool stream_step(Run& r, live::EngineServer& engine, httplib::DataSink& sink) {
  if (!sink.is_writable()) {
    r.abort_all(engine);
    return false;
  }
  for (auto& c : r.choices) {
    if (!c.over()) {
      c.wait(kPoll);
      break;
    }
  }
  std::string events;
  for (std::size_t i = 0; i < r.choices.size(); ++i) {
    auto& c = r.choices[i];
    if (c.over()) continue;
    auto& delta = r.chunk;
    delta.index = static_cast<std::int64_t>(i);
    const bool ended = c.take(engine, delta);
    if (!ended && delta.delta_ids.empty() && delta.text.empty()) continue;
    delta.first = !r.started[i];
    r.started[i] = true;
    events += http::completion_chunk_event(delta);
  }
  const bool over = r.over();
  if (over) {
    if (r.include_usage) {
      events += http::completion_usage_event(r.chunk.id, r.chunk.model, r.chunk.created_s, r.prompt_tok, r.generated_tok(), r.chunk.chat);
    }
    events += http::kStreamDone;
  }
  if (!events.empty() && !sink.write(events.data(), events.size())) {
    r.abort_all(engine);
    return false;
  }
  // The holds on the bound go with the response, once written whole: a
  // shutdown waits for them before the listener closes.
  if (over) sink.done();
  return true;
}

// A reply that is not streamed: every choice taken as it grows, so that a
// stop string ends it early.
std::vector<http::CompletionChunk> take_whole(Run& run, live::EngineServer& engine) {
  std::vector<http::CompletionChunk> whole(run.choices.size(), run.chunk);
  http::CompletionChunk delta = run.chunk;
  while (!run.over()) {
    for (auto& c : run.choices) {
      if (!c.over()) {
        c.wait(kPoll);
        break;
      }
    }
    for (std::size_t i = 0; i < run.choices.size(); ++i) {
      auto& c = run.choices[i];
      if (c.over()) continue;
      auto& w = whole[i];
      w.index = static_cast<std::int64_t>(i);
      c.take(engine, delta);
      w.delta_ids.insert(w.delta_ids.end(), delta.delta_ids.begin(), delta.delta_ids.end());
      w.delta_logprobs.insert(w.delta_logprobs.end(), delta.delta_logprobs.begin(), delta.delta_logprobs.end());
      w.text += delta.text;
      w.finish = delta.finish;
      w.matched_stop = delta.matched_stop;
      w.stop_string = delta.stop_string;
    }
  }
  return whole;
}

void reply_streamed(httplib::Response& res, const std::shared_ptr<Run>& run, live::EngineServer& engine) {
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [run, &engine](std::size_t, httplib::DataSink& sink) { return stream_step(*run, engine, sink); },
      [run, &engine](bool success) {
        // Ended before the outcome (a write failed, the server stops): the
        // requests must not run on for nobody.
        if (!success) run->abort_all(engine);
      });
}

void serve_call(const std::string& route, const std::string& body, httplib::Response& res, live::EngineServer& engine, OpenRequests& open,
                const OpenAIText& text, std::atomic<std::uint64_t>& next_id, bool chat) {
  http::CompletionCall call;
  try {
    call = chat ? http::parse_chat_call(body, route) : http::parse_completion_call(body, route);
  } catch (const base::JsonPathError& e) {
    return reply_openai_error(res, 400, e.what(), http::param_of_path(e.path()));
  } catch (const base::ConfigError& e) {
    return reply_openai_error(res, 400, e.what());
  }
  const auto st = engine.status();
  // vLLM answers a model it does not serve with 404 (NotFoundError), not by
  // serving its own: a client naming the wrong server learns so.
  if (!call.model.empty() && call.model != st.checkpoint_dir) {
    return reply_openai_error(
        res, 404,
        fmt::format("{}: the model `{}` does not exist (this server serves `{}`, GET /v1/models)", route, call.model, st.checkpoint_dir),
        "model");
  }
  if (const auto refused = prepare(call, text, st)) {
    return reply_openai_error(res, refused->status, fmt::format("{}: {}", route, refused->message), refused->param);
  }
  auto run = std::make_shared<Run>();
  run->choices.reserve(static_cast<std::size_t>(call.n));
  for (std::int64_t i = 0; i < call.n; ++i) {
    run->holds.push_back(std::unique_ptr<OpenRequests::Hold>(new OpenRequests::Hold(open.try_open())));
    if (!run->holds.back()->held()) {
      return reply_openai_error(res, 503,
                                fmt::format("{}: {}", route, engine.closed() ? "the server is shutting down" : queue_full(open.max())));
    }
  }
  const auto base_id =
      call.generate.rid.empty() ? fmt::format("{}-april-{}", chat ? "chatcmpl" : "cmpl", next_id.fetch_add(1)) : call.generate.rid;
  for (std::int64_t i = 0; i < call.n; ++i) {
    auto g = call.generate;
    // Fixed width: an abort of one choice's rid matches no other as a prefix.
    g.rid = call.n == 1 ? base_id : fmt::format("{}#{:03}", base_id, i);
    if (g.sampling_seed && i > 0) g.sampling_seed = *g.sampling_seed + static_cast<std::uint64_t>(i);
    auto tokens = std::make_shared<live::TokenStream>();
    std::future<http::GenerateOutcome> outcome;
    try {
      outcome = engine.submit(g, tokens);
    } catch (const std::invalid_argument& e) {
      run->abort_all(engine);
      return reply_openai_error(res, 400, fmt::format("{}: {}", route, e.what()), call.generate.rid.empty() ? "" : "request_id");
    } catch (const std::exception& e) {
      run->abort_all(engine);
      return reply_openai_error(res, 503, fmt::format("{}: {}", route, e.what()));
    }
    run->choices.emplace_back(g.rid, std::move(tokens), outcome.share(), text.tokenizer ? &*text.tokenizer : nullptr, call.stop,
                              call.include_stop_str);
  }
  run->started.assign(run->choices.size(), false);
  run->chunk.id = base_id;
  run->chunk.model = st.checkpoint_dir;
  run->chunk.created_s = static_cast<std::int64_t>(std::time(nullptr));
  run->chunk.logprobs = call.logprobs;
  run->chunk.chat = chat;
  run->prompt_tok = static_cast<std::int64_t>(call.generate.input_ids.size());
  run->include_usage = call.include_usage;
  if (!call.stream) return reply_json(res, 200, http::completion_reply_json(take_whole(*run, engine), run->prompt_tok));
  reply_streamed(res, run, engine);
}

}  // namespace

void add_openai_routes(HttpServer& svr, live::EngineServer& engine, OpenRequests& open, const OpenAIText& text) {
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
  svr.post_with_body("/v1/completions",
                     [&engine, &open, &text, next_id](const httplib::Request&, const std::string& body, httplib::Response& res) {
                       serve_call("POST /v1/completions", body, res, engine, open, text, *next_id, false);
                     });
  svr.post_with_body("/v1/chat/completions",
                     [&engine, &open, &text, next_id](const httplib::Request&, const std::string& body, httplib::Response& res) {
                       serve_call("POST /v1/chat/completions", body, res, engine, open, text, *next_id, true);
                     });
}

}  // namespace april::cli
