// `april serve`: the live engine behind the subset of SGLang's HTTP API that
// RL rollouts use (adapters/http/sglang_protocol.hpp), so that a machine
// without Python stands up a server that slime-style controllers, and april
// itself, drive over HTTP.
//
// HTTP: cpp-httplib (Debian's libcpp-httplib-dev). It is a complete blocking
// HTTP/1.1 server and client with a thread pool; Boost.Beast would need the
// connection handling, keep-alive and the pool written by hand. Its bounds
// under load (threads, accept queue, body size, timeouts) are set in
// cli/serve_http.cpp.
#include <fmt/format.h>
#include <httplib.h>

#include <unistd.h>
#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>

#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/engine_server.hpp"
#include "base/config.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "cli/serve_http.hpp"
#include "cli/serve_open_requests.hpp"
#include "cli/serve_openai_routes.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

// --max-queued-requests: room for a burst as large as a rollout batch
// (slime sends B x n at once), each waiting request costing a thread.
constexpr std::int64_t kDefaultMaxQueued = 1024;
// A thread each: far past this, a machine runs out of threads or memory first.
constexpr std::int64_t kMaxQueued = 65536;
// Handler threads beyond the bound on open requests.
constexpr std::int64_t kSpareThreads = 32;
constexpr std::int64_t kMinBodyBytes = std::int64_t{1} << 20;

// SIGINT and SIGTERM reach this process-wide handler, which writes the
// signal to a pipe that one thread of the command waits on. Blocking the
// signals instead is not enough: threads that libraries start before main
// (OpenBLAS's) would take them and end the process. A signal is the
// process's, so this one descriptor is too; nothing else is global.
std::atomic<int> g_stop_pipe_write{-1};

extern "C" void on_stop_signal(int sig) {
  const int fd = g_stop_pipe_write.load();
  if (fd >= 0) {
    const auto byte = static_cast<char>(sig);
    [[maybe_unused]] const auto n = ::write(fd, &byte, 1);
  }
}

// POST /generate and the calls that steer the engine: abort, new weights, pause, continue.
void add_engine_calls(HttpServer& svr, live::EngineServer& engine, OpenRequests& open) {
  svr.post_with_body("/generate", [&engine, &open](const httplib::Request&, const std::string& body, httplib::Response& res) {
    http::GenerateCall call;
    try {
      call = http::parse_generate_call(body, "POST /generate");
    } catch (const base::ConfigError& e) {
      return reply_error(res, 400, e.what());
    }
    const auto hold = open.try_open();
    // Requests still open at a shutdown hold the bound until their replies
    // are written: a refusal then says why it is refused.
    if (!hold.held()) {
      return reply_error(res, 503,
                         fmt::format("POST /generate: {}", engine.closed() ? "the server is shutting down" : queue_full(open.max())));
    }
    std::future<http::GenerateOutcome> reply;
    try {
      reply = engine.submit(call);
    } catch (const std::invalid_argument& e) {
      return reply_error(res, 400, fmt::format("POST /generate: {}", e.what()));
    } catch (const std::exception& e) {
      return reply_error(res, 503, fmt::format("POST /generate: {}", e.what()));
    }
    reply_json(res, 200, http::generate_reply_json(reply.get()));
  });
  svr.post_with_body("/abort_request", [&engine](const httplib::Request&, const std::string& body, httplib::Response& res) {
    try {
      (void)engine.abort(http::parse_abort_call(body, "POST /abort_request"));
    } catch (const base::ConfigError& e) {
      return reply_error(res, 400, e.what());
    }
    res.status = 200;
  });
  svr.post_with_body("/update_weights_from_disk", [&engine](const httplib::Request&, const std::string& body, httplib::Response& res) {
    http::UpdateWeightsCall call;
    try {
      call = http::parse_update_weights_call(body, "POST /update_weights_from_disk");
    } catch (const base::ConfigError& e) {
      return reply_error(res, 400, e.what());
    }
    const auto why = engine.update_weights_from_disk({call.model_path, call.weight_version, call.abort_all_requests});
    reply_json(res, why.empty() ? 200 : 400,
               http::update_weights_reply_json(why.empty(), why.empty() ? "Succeeded to update model weights." : why));
  });
  svr.post_with_body("/pause_generation", [&engine](const httplib::Request&, const std::string& body, httplib::Response& res) {
    try {
      engine.pause(http::parse_pause_call(body, "POST /pause_generation").abort_in_flight);
    } catch (const base::ConfigError& e) {
      return reply_error(res, 400, e.what());
    }
    reply_json(res, 200, nlohmann::json{{"message", "Generation paused successfully."}, {"status", "ok"}}.dump());
  });
  svr.post_with_body("/continue_generation", [&engine](const httplib::Request&, const std::string&, httplib::Response& res) {
    engine.resume();
    reply_json(res, 200, nlohmann::json{{"message", "Generation continued successfully."}, {"status", "ok"}}.dump());
  });
}

// /metrics, /health and /health_generate: what a router or a monitor polls.
void add_health_routes(HttpServer& svr, live::EngineServer& engine, OpenRequests& open) {
  svr.Get("/metrics", [&engine](const httplib::Request&, httplib::Response& res) {
    // Prometheus text with SGLang's metric names (srt/metrics/collector.py).
    const auto s = engine.status();
    std::string model;  // a label value: backslash and quote escaped, as the text format asks
    for (const char ch : s.checkpoint_dir) {
      if (ch == '\\' || ch == '"') model += '\\';
      model += ch;
    }
    const auto label = fmt::format("{{model_name=\"{}\"}}", model);
    std::string out;
    const auto metric = [&](const char* name, const char* type, const char* help, std::int64_t value) {
      out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0}{3} {4}\n", name, help, type, label, value);
    };
    metric("sglang:num_running_reqs", "gauge", "The number of running requests.", s.running);
    metric("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", s.waiting);
    metric("sglang:num_used_tokens", "gauge", "The number of tokens in the KV cache.", s.resident_tok);
    metric("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", s.prompt_tok);
    metric("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", s.generated_tok);
    metric("sglang:num_aborted_requests_total", "counter", "Number of requests aborted.", s.aborted);
    res.status = 200;
    res.set_content(out, "text/plain; version=0.0.4");
  });
  const auto health = [](const httplib::Request&, httplib::Response& res) { res.status = 200; };
  svr.Get("/health", health);
  svr.Get("/health_generate", [&engine, &open](const httplib::Request&, httplib::Response& res) {
    // As SGLang's: one token generated for input_ids [0].
    const auto hold = open.try_open();
    if (!hold.held()) {
      return reply_error(res, 503,
                         fmt::format("GET /health_generate: {}", engine.closed() ? "the server is shutting down" : queue_full(open.max())));
    }
    http::GenerateCall c;
    c.input_ids = {0};
    c.max_new_tokens = 1;
    c.temperature = 0;
    c.rid = "HEALTH_CHECK_" + std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    try {
      (void)engine.submit(c).get();
      res.status = 200;
    } catch (const std::exception& e) {
      reply_error(res, 503, e.what());
    }
  });
}

// What the server is and holds, and /flush_cache.
void add_info_routes(HttpServer& svr, live::EngineServer& engine) {
  svr.Get("/get_model_info", [&engine](const httplib::Request&, httplib::Response& res) {
    const auto s = engine.status();
    reply_json(res, 200,
               nlohmann::json{{"model_path", s.checkpoint_dir},
                              {"tokenizer_path", s.checkpoint_dir},
                              {"is_generation", true},
                              {"preferred_sampling_params", nullptr},
                              {"weight_version", s.weight_version}}
                   .dump());
  });
  svr.Get("/get_weight_version", [&engine](const httplib::Request&, httplib::Response& res) {
    reply_json(res, 200, nlohmann::json{{"weight_version", engine.status().weight_version}}.dump());
  });
  svr.Get("/get_server_info", [&engine](const httplib::Request&, httplib::Response& res) {
    const auto s = engine.status();
    reply_json(res, 200,
               nlohmann::json{{"version", "april serve"},
                              {"model_path", s.checkpoint_dir},
                              {"architecture", s.architecture},
                              {"parameters", s.parameters},
                              {"device", s.device},
                              {"dtype", s.dtype},
                              {"context_length", s.context_length},
                              {"max_running_requests", s.slots},
                              {"weight_version", s.weight_version},
                              {"paused", s.paused},
                              {"requests", s.requests},
                              {"aborted_requests", s.aborted},
                              {"prompt_tokens", s.prompt_tok},
                              {"generation_tokens", s.generated_tok},
                              {"iterations", s.iterations}}
                   .dump());
  });
  svr.Get("/v1/loads", [&engine](const httplib::Request&, httplib::Response& res) {
    const auto s = engine.status();
    const double usage =
        s.slots > 0 && s.context_length > 0 ? static_cast<double>(s.resident_tok) / static_cast<double>(s.slots * s.context_length) : 0.0;
    reply_json(res, 200,
               nlohmann::json{{"version", "april serve"},
                              {"loads",
                               {{{"dp_rank", 0},
                                 {"num_running_reqs", s.running},
                                 {"num_waiting_reqs", s.waiting},
                                 {"num_used_tokens", s.resident_tok},
                                 {"token_usage", usage}}}}}
                   .dump());
  });
  const auto flush = [&engine](httplib::Response& res) {
    // The engine keeps no prefix cache: nothing outlives a request. As
    // SGLang's, refused while requests run.
    const auto s = engine.status();
    if (s.running + s.waiting > 0) return reply_error(res, 400, fmt::format("{} requests are running or waiting", s.running + s.waiting));
    res.status = 200;
    res.set_content("Cache flushed.", "text/plain");
  };
  svr.Get("/flush_cache", [flush](const httplib::Request&, httplib::Response& res) { flush(res); });
  svr.post_with_body("/flush_cache", [flush](const httplib::Request&, const std::string&, httplib::Response& res) { flush(res); });
}

// The routes. Bad requests are 400 with SGLang's error body, naming the JSON
// path; a request past the bound on open ones, or one sent once a shutdown
// began, 503; a failure of the engine is 500.
void add_routes(HttpServer& svr, live::EngineServer& engine, OpenRequests& open) {
  add_engine_calls(svr, engine, open);
  add_health_routes(svr, engine, open);
  add_info_routes(svr, engine);
}

// The checkpoint's tokenizer, for text prompts, text replies and stop
// strings; a server without one (or with one april cannot read) still
// serves token ids, and says why there is no text.
void load_text(OpenAIText& text, const live::EngineServerStatus& st) {
  const auto path = std::filesystem::path(st.checkpoint_dir) / "tokenizer.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::fputs(fmt::format("april serve: no {}: /v1 routes take token ids only, and give no text\n", path.string()).c_str(), stdout);
  } else {
    try {
      text.tokenizer = hf::Tokenizer::load(path.string());
    } catch (const base::ConfigError& e) {
      std::fputs(fmt::format("april serve: warning: text is not served: {}\n", e.what()).c_str(), stderr);
    }
  }
  // Qwen3's one template serves every Qwen3 checkpoint; the others' differ by version.
  if (!text.chat && (st.architecture == "Qwen3ForCausalLM" || st.architecture == "Qwen3MoeForCausalLM")) text.chat = hf::ChatFamily::kQwen3;
  if (text.tokenizer) {
    std::fputs(fmt::format("april serve: text through {}; chat template {}\n", path.string(),
                           text.chat ? hf::chat_family_name(*text.chat) : "none (--chat FAMILY)")
                   .c_str(),
               stdout);
  }
}

// What the command line says, bound to the options that fill it.
struct ServeArgs {
  live::EngineServerOptions o;
  std::string host = "127.0.0.1";
  std::int64_t port = 30000, slots = 64, context = 0, threads = 1, seed = 0, max_queued = kDefaultMaxQueued, max_body = 0;
  std::string chat;
};

po::options_description serve_options(ServeArgs& a) {
  po::options_description opts(
      "usage: april serve --checkpoint DIR [--host 127.0.0.1] [--port 30000] [--slots N] [--context-length N]\n"
      "                   [--device cpu|cuda] [--dtype float32|bfloat16] [--threads N] [--seed S] [--weight-version V]\n"
      "                   [--exact-prefill] [--max-queued-requests N] [--max-body-bytes N] [--chat FAMILY]\n"
      "Serves a Hugging Face checkpoint (Qwen3, Qwen2/Qwen2.5, Llama 3) on the live engine behind the subset of SGLang's\n"
      "HTTP API that RL rollouts use: POST /generate (input_ids; sampling_params max_new_tokens, temperature, top_p,\n"
      "stop_token_ids, ignore_eos, sampling_seed; return_logprob), POST /abort_request (rid prefix or abort_all: the\n"
      "aborted request answers with its partial output, finish_reason abort), GET /health, /health_generate,\n"
      "/get_model_info, /get_server_info, /get_weight_version, /v1/loads, /metrics, /flush_cache, POST /pause_generation\n"
      "(abort or in_place), /continue_generation and /update_weights_from_disk (a checkpoint of the same shapes loaded\n"
      "in place); and vLLM's OpenAI-compatible API: GET /v1/models, POST /v1/completions (a prompt of token ids, or text\n"
      "with the checkpoint's tokenizer.json) and /v1/chat/completions (the --chat family's template), streamed or not,\n"
      "with stop strings, n choices, seeds, token_ids and logprobs 0 in the reply, and vLLM's error bodies; a stream\n"
      "whose client closes it is aborted. Streaming /generate, top-k and penalties are refused by name (docs/serve.md).\n"
      "--port 0 picks a free port. Prints \"april serve: listening on http://HOST:PORT\" once ready.\n"
      "Under load: past --slots + --max-queued-requests open requests a request is refused 503, a body past\n"
      "--max-body-bytes 413, and a client silent for 5 s is dropped. SIGINT or SIGTERM stops it: requests in flight\n"
      "are answered as aborted, with their partial output, and new ones refused 503.\n\noptions");
  opts.add_options()("help,h", "show this help")("checkpoint", po::value(&a.o.checkpoint_dir)->required(),
                                                 "the Hugging Face checkpoint folder")(
      "host", po::value(&a.host), "address to listen on (default 127.0.0.1)")("port", integer_option(&a.port, 30000),
                                                                              "port; 0 picks a free one")(
      "slots", integer_option(&a.slots, 64), "requests decoded together (SGLang's max_running_requests); more wait")(
      "context-length", integer_option(&a.context, 0), "prompt + new tokens at most (default min(max_position_embeddings, 4096))")(
      "device", po::value(&a.o.device), "cpu or cuda")("dtype", po::value(&a.o.dtype), "the engine's dtype: float32 or bfloat16")(
      "threads", integer_option(&a.threads, 1), "torch intra-op threads")(
      "seed", integer_option(&a.seed, 0), "draws of a request without sampling_seed: (seed, arrival number)")(
      "weight-version", po::value(&a.o.weight_version), "the weight_version replies carry (default \"default\", as SGLang)")(
      "exact-prefill", po::bool_switch(&a.o.exact_prefill),
      "prefill one token per iteration through the decode kernel: tokens that do not "
      "depend on the batch, and a resumed abort that continues exactly (slower for long prompts)")(
      "max-queued-requests", integer_option(&a.max_queued, kDefaultMaxQueued),
      "requests that may wait beyond the --slots running; past that many, 503 (each open request holds a thread)")(
      "max-body-bytes", integer_option(&a.max_body),
      "a request body past this is refused 413 (default 1 MiB, or 16 bytes per token of context where that is more)")(
      "chat", po::value(&a.chat),
      "the chat template of /v1/chat/completions: qwen2, qwen2.5, qwen3, llama3 or llama3.1 (default: qwen3 for a Qwen3 "
      "checkpoint; none for others, whose templates differ by version)");
  return opts;
}

// Refuses values out of range, and moves the engine's into a.o.
void check_serve_args(ServeArgs& a, const po::variables_map& vm) {
  if (a.port < 0 || a.port > 65535) throw std::invalid_argument(fmt::format("--port {}: 0 to 65535", a.port));
  if (a.slots < 1 || a.slots > 4096) throw std::invalid_argument(fmt::format("--slots {}: 1 to 4096", a.slots));
  if (a.threads < 1 || a.threads > 256) throw std::invalid_argument(fmt::format("--threads {}: 1 to 256", a.threads));
  if (a.max_queued < 0 || a.max_queued > kMaxQueued) {
    throw std::invalid_argument(fmt::format("--max-queued-requests {}: 0 to {}", a.max_queued, kMaxQueued));
  }
  if (vm.count("max-body-bytes") && (a.max_body < 1024 || a.max_body > (std::int64_t{1} << 30))) {
    throw std::invalid_argument(fmt::format("--max-body-bytes {}: 1024 to 1073741824 (1 GiB)", a.max_body));
  }
  a.o.slots = a.slots;
  a.o.context_length = a.context;
  a.o.threads = a.threads;
  a.o.seed = static_cast<std::uint64_t>(a.seed);
}

// Each connection is a descriptor: a soft limit of 1024 would stop accepts below the bound.
void raise_file_limit_for(const HttpLimits& limits) {
  const auto files = raise_open_file_limit();
  if (files < limits.max_threads + 64) {
    std::fputs(fmt::format("april serve: warning: {} open files at most, fewer than the {} connections the bound on requests admits\n",
                           files, limits.max_threads)
                   .c_str(),
               stderr);
  }
}

// Serves until SIGINT or SIGTERM (or an error, rethrown once the server is down).
void serve_until_stopped(HttpServer& svr, live::EngineServer& engine, OpenRequests& open, const std::string& host, int bound) {
  int stop_pipe[2] = {-1, -1};
  if (::pipe(stop_pipe) != 0) throw std::runtime_error("cannot make a pipe for the stop signals");
  g_stop_pipe_write = stop_pipe[1];
  struct sigaction on_stop {};
  on_stop.sa_handler = on_stop_signal;
  sigemptyset(&on_stop.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &on_stop, &old_int);
  sigaction(SIGTERM, &on_stop, &old_term);
  std::thread stopper([&svr, &engine, &open, read_fd = stop_pipe[0]] {
    char byte = 0;
    while (::read(read_fd, &byte, 1) < 0 && errno == EINTR) {
    }
    // Requests in flight are answered (aborted, with their tokens) before
    // the listener stops, so no handler waits on the engine. A zero byte is
    // the command's own wake-up after serve ended otherwise.
    if (byte != 0) {
      engine.close();
      // Streams (/v1/completions) end with the event that carries their
      // abort, then [DONE]: the listener waits until they are written, as
      // httplib cuts a stream short once stopped. Bounded by the 5 s write
      // timeout of a client that does not read.
      for (int waited_ms = 0; open.open() > 0 && waited_ms < 6000; waited_ms += 10) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    svr.stop_serving();
  });
  std::exception_ptr failed;
  try {
    svr.serve(host, bound);
  } catch (...) {
    failed = std::current_exception();
    engine.close();  // the handlers still open answer, and end
  }
  // serve ended by a signal (the stopper has stopped it) or by an error:
  // wake the stopper either way.
  const char zero = 0;
  [[maybe_unused]] const auto n = ::write(stop_pipe[1], &zero, 1);
  stopper.join();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  g_stop_pipe_write = -1;
  ::close(stop_pipe[0]);
  ::close(stop_pipe[1]);
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  ServeArgs a;
  const auto opts = serve_options(a);
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  check_serve_args(a, vm);

  OpenAIText text;
  if (!a.chat.empty()) text.chat = hf::chat_family_from_name(a.chat);
  live::EngineServer engine(a.o);
  const auto st = engine.status();
  load_text(text, st);
  OpenRequests open(a.slots + a.max_queued);
  HttpLimits limits;
  // Every open request holds a handler thread until it is answered; the
  // threads beyond them serve the control routes, refusals, and clients
  // still sending or kept alive.
  limits.max_threads = static_cast<std::size_t>(open.max() + kSpareThreads);
  limits.max_body_bytes =
      static_cast<std::size_t>(vm.count("max-body-bytes") ? a.max_body : std::max(kMinBodyBytes, 16 * st.context_length));
  HttpServer svr(limits);
  add_routes(svr, engine, open);
  add_openai_routes(svr, engine, open, text);
  raise_file_limit_for(limits);
  const int bound = svr.bind(a.host, static_cast<int>(a.port));
  if (bound < 0)
    throw std::runtime_error(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", a.host, a.port));
  std::fputs(fmt::format("april serve: {} ({:.2f}M parameters) on {} {}, {} slots, context {}, {} requests open at most, "
                         "bodies up to {} bytes\n",
                         st.architecture, static_cast<double>(st.parameters) / 1e6, st.device, st.dtype, st.slots, st.context_length,
                         open.max(), limits.max_body_bytes)
                 .c_str(),
             stdout);
  std::fputs(fmt::format("april serve: listening on http://{}:{}\n", a.host, bound).c_str(), stdout);
  std::fflush(stdout);
  serve_until_stopped(svr, engine, open, a.host, bound);
  std::fputs("april serve: stopped\n", stdout);
  return 0;
}

}  // namespace april::cli
