#include "adapters/live/http_profiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "adapters/http/openai_protocol.hpp"
#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/http_calls.hpp"
#include "adapters/live/http_stream.hpp"
#include "base/json_value.hpp"

namespace april::live {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What the server says of itself: its slots, context, and the checkpoint it serves.
struct ServerFacts {
  std::int64_t slots = 0, context_tok = 0;
  std::string model_path, name;
};

// vLLM's: the first model /v1/models lists (its id is each request's
// "model") and its max_model_len; the slots as given.
ServerFacts vllm_facts(const HttpProfileOptions& o) {
  ServerFacts f;
  nlohmann::json doc;
  const auto body = get_or_throw(o.url, "/v1/models", 5, 30);
  if (base::parse_json(body, doc) || !doc.is_object() || !doc.contains("data") || !doc["data"].is_array() || doc["data"].empty() ||
      !doc["data"][0].is_object() || !doc["data"][0].contains("id") || !doc["data"][0]["id"].is_string()) {
    throw std::runtime_error(fmt::format("{}/v1/models: no model named (data[0].id)", o.url));
  }
  const auto& m = doc["data"][0];
  f.name = m["id"].get<std::string>();
  f.model_path = f.name;
  if (m.contains("max_model_len") && m["max_model_len"].is_number_integer()) f.context_tok = m["max_model_len"].get<std::int64_t>();
  f.slots = o.slots;
  if (f.slots < 1) throw std::invalid_argument("over vLLM's API the server's slots must be given (vLLM does not say its --max-num-seqs)");
  return f;
}

ServerFacts server_facts(const HttpProfileOptions& o) {
  if (o.vllm) return vllm_facts(o);
  ServerFacts f;
  nlohmann::json doc;
  const auto body = get_or_throw(o.url, "/get_server_info", 5, 30);
  if (base::parse_json(body, doc) || !doc.is_object())
    throw std::runtime_error(fmt::format("{}/get_server_info: not a JSON object", o.url));
  const auto integer = [&doc](const char* key) {
    return doc.contains(key) && doc[key].is_number_integer() ? doc[key].get<std::int64_t>() : std::int64_t{0};
  };
  f.slots = o.slots > 0 ? o.slots : integer("max_running_requests");
  f.context_tok = integer("context_length");
  if (doc.contains("model_path") && doc["model_path"].is_string()) f.model_path = doc["model_path"].get<std::string>();
  f.name = doc.contains("version") && doc["version"].is_string() ? doc["version"].get<std::string>() : std::string("server");
  if (f.slots < 1) throw std::runtime_error(fmt::format("{}/get_server_info: no max_running_requests to size the batches by", o.url));
  return f;
}

// The bodies of B identical greedy requests (prompts of random ids, each
// its own rid), each to run exactly `max_new` tokens.
std::vector<nlohmann::json> wave_bodies(const HttpProfileOptions& o, const ServerFacts& facts, std::int64_t batch, std::int64_t prompt_tok,
                                        std::int64_t max_new, std::mt19937_64& rng, std::int64_t* rid) {
  std::uniform_int_distribution<std::int32_t> id(1, o.max_token_id);
  std::vector<nlohmann::json> bodies;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(prompt_tok));
    for (auto& t : ids) t = id(rng);
    if (o.vllm) {
      // Every sampling field that could stop or shape it set (vLLM fills unset ones from generation_config).
      bodies.push_back(nlohmann::json{{"model", facts.name},
                                      {"prompt", ids},
                                      {"max_tokens", max_new},
                                      {"temperature", 0},
                                      {"top_p", 1.0},
                                      {"top_k", -1},
                                      {"min_tokens", 0},
                                      {"ignore_eos", true},
                                      {"return_token_ids", true},
                                      {"logprobs", 0},
                                      {"return_tokens_as_token_ids", true},
                                      {"request_id", fmt::format("april-profile-{}", (*rid)++)}});
      continue;
    }
    bodies.push_back(nlohmann::json{{"input_ids", ids},
                                    {"rid", fmt::format("april-profile-{}", (*rid)++)},
                                    {"sampling_params", {{"max_new_tokens", max_new}, {"temperature", 0}, {"ignore_eos", true}}}});
  }
  return bodies;
}

const char* generate_route(const HttpProfileOptions& o) { return o.vllm ? "/v1/completions" : "/generate"; }

// Each body a POST /generate (/v1/completions) on a thread of its own, all at once.
std::vector<std::future<std::string>> send_all(const HttpProfileOptions& o, const std::vector<nlohmann::json>& bodies) {
  std::vector<std::future<std::string>> replies;
  for (const auto& body : bodies) {
    replies.push_back(
        std::async(std::launch::async, [&o, text = body.dump()] { return post_or_throw(o.url, generate_route(o), text, 5, o.timeout_s); }));
  }
  return replies;
}

// B requests sent at once; the seconds until the last has answered, each
// checked to have run its `max_new` tokens.
double wave_s(const HttpProfileOptions& o, const ServerFacts& facts, std::int64_t batch, std::int64_t prompt_tok, std::int64_t max_new,
              std::mt19937_64& rng, std::int64_t* rid) {
  const auto bodies = wave_bodies(o, facts, batch, prompt_tok, max_new, rng, rid);
  const auto start = Clock::now();
  auto replies = send_all(o, bodies);
  std::vector<std::string> texts;
  std::string error;
  for (auto& r : replies) {
    try {
      texts.push_back(r.get());
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  const double took_s = seconds_since(start);
  if (!error.empty()) throw std::runtime_error(error);
  for (const auto& text : texts) {
    const auto source = o.url + generate_route(o) + " reply";
    const auto reply = o.vllm ? http::parse_completion_reply(text, source) : http::parse_generate_reply(text, source);
    if (static_cast<std::int64_t>(reply.output_ids.size()) != max_new) {
      throw std::runtime_error(fmt::format("{}{}: a profile request ran {} tokens, not the {} asked with ignore_eos", o.url,
                                           generate_route(o), reply.output_ids.size(), max_new));
    }
  }
  return took_s;
}

// B requests running, then abort_all: seconds until all have answered.
// Requests the server runs now: /v1/loads' num_running_reqs (SGLang, april
// serve), else the Prometheus gauge vllm:num_requests_running summed over
// its labels (vLLM's /metrics); none when the server says neither.
std::optional<std::int64_t> running_requests(const HttpProfileOptions& o) {
  try {
    nlohmann::json doc;
    if (!base::parse_json(get_or_throw(o.url, "/v1/loads", 5, 5), doc) && doc.is_object() && doc.contains("loads") &&
        doc["loads"].is_array() && !doc["loads"].empty() && doc["loads"][0].is_object() && doc["loads"][0].contains("num_running_reqs") &&
        doc["loads"][0]["num_running_reqs"].is_number_integer()) {
      return doc["loads"][0]["num_running_reqs"].get<std::int64_t>();
    }
  } catch (const std::exception&) {
    // Not SGLang's: vLLM's metrics below.
  }
  try {
    const auto text = get_or_throw(o.url, "/metrics", 5, 5);
    std::optional<double> sum;
    for (std::size_t at = 0; at < text.size();) {
      auto end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const auto line = std::string_view(text).substr(at, end - at);
      at = end + 1;
      if (line.rfind("vllm:num_requests_running", 0) != 0) continue;
      const auto space = line.rfind(' ');
      if (space == std::string_view::npos) continue;
      try {
        sum = sum.value_or(0.0) + std::stod(std::string(line.substr(space + 1)));
      } catch (const std::exception&) {
        // A value that is not a number: the gauge is not read.
      }
    }
    if (sum) return static_cast<std::int64_t>(*sum + 0.5);
  } catch (const std::exception&) {
    // No /metrics either.
  }
  return std::nullopt;
}

// Over vLLM's API the requests stream, and the abort closes every stream.
std::vector<std::future<std::string>> send_streams(const HttpProfileOptions& o, const std::vector<nlohmann::json>& bodies,
                                                   std::vector<std::shared_ptr<StreamCancel>>& cancels) {
  std::vector<std::future<std::string>> replies;
  for (const auto& body : bodies) {
    auto doc = body;
    doc["stream"] = true;
    cancels.push_back(std::make_shared<StreamCancel>());
    replies.push_back(std::async(std::launch::async, [&o, doc, cancel = cancels.back()] {
      (void)completion_stream(o.url, doc, 5, o.timeout_s, *cancel);
      return std::string();
    }));
  }
  return replies;
}

rl::AbortPoint abort_point(const HttpProfileOptions& o, const ServerFacts& facts, std::int64_t batch, std::int64_t prompt_tok,
                           std::int64_t max_new, std::mt19937_64& rng, std::int64_t* rid) {
  std::vector<std::shared_ptr<StreamCancel>> cancels;
  const auto bodies = wave_bodies(o, facts, batch, prompt_tok, max_new, rng, rid);
  auto replies = o.vllm ? send_streams(o, bodies, cancels) : send_all(o, bodies);
  // Running once the server has them all (running_requests); a server that
  // does not say gets a quarter second.
  const auto sent = Clock::now();
  while (seconds_since(sent) < 5) {
    const auto running = running_requests(o);
    if ((running && *running >= batch) || (!running && seconds_since(sent) > 0.25)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto start = Clock::now();
  // Sent again every 0.2 s until all have answered: one still on its way runs on.
  auto last = Clock::time_point{};
  std::string error;
  for (auto& r : replies) {
    while (r.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
      if (Clock::now() - last > std::chrono::milliseconds(200)) {
        if (o.vllm) {
          for (const auto& c : cancels) c->cancel();
        } else {
          (void)post_or_throw(o.url, "/abort_request", R"({"abort_all": true})", 5, 30);
        }
        last = Clock::now();
      }
    }
    try {
      (void)r.get();
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  // Closing a stream ends it at once for the client; a vLLM server frees the
  // request when it next sees the connection closed. The abort lasts until
  // the server runs none of them (where it says), at most 5 s more.
  if (o.vllm) {
    const auto closed = Clock::now();
    while (seconds_since(closed) < 5) {
      const auto running = running_requests(o);
      if (!running || *running == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  const double took_s = seconds_since(start);
  if (!error.empty()) throw std::runtime_error(error);
  return {static_cast<double>(batch), took_s};
}

}  // namespace

rl::Profile profile_http_engine(const HttpProfileOptions& o, const std::function<void(std::int64_t, std::int64_t)>& progress) {
  if (o.decode_tok < 2) throw std::invalid_argument("the decode window needs at least 2 tokens");
  if (o.repeats < 1) throw std::invalid_argument("--repeats must be at least 1");
  if (o.max_token_id < 1) throw std::invalid_argument("the largest prompt token id must be at least 1");
  const ServerFacts facts = server_facts(o);
  std::vector<std::int64_t> batches = o.batches;
  if (batches.empty()) {
    for (std::int64_t b = 1; b < facts.slots; b *= 2) batches.push_back(b);
    batches.push_back(facts.slots);
  }
  std::vector<std::int64_t> prompts = o.prompt_tok;
  if (prompts.empty()) {
    prompts.push_back(16);
    if (facts.context_tok > 0 && facts.context_tok / 4 > 16 + o.decode_tok) prompts.push_back(facts.context_tok / 4);
  }
  for (const auto b : batches) {
    if (b < 1 || b > facts.slots) {
      throw std::invalid_argument(fmt::format("batch {}: the server runs 1 to {} requests at once", b, facts.slots));
    }
  }
  for (const auto l : prompts) {
    if (l < 1 || (facts.context_tok > 0 && l + o.decode_tok > facts.context_tok)) {
      throw std::invalid_argument(
          fmt::format("a prompt of {} tokens and {} new ones do not fit the server's context of {}", l, o.decode_tok, facts.context_tok));
    }
  }
  rl::Profile p;
  p.device = o.url;
  p.model = facts.model_path.empty() ? facts.name : facts.model_path;
  p.slots = facts.slots;
  const bool weight_load = o.weight_load && !o.vllm;  // vLLM has no /update_weights_from_disk
  const std::int64_t waves_per_pass = static_cast<std::int64_t>(batches.size() * prompts.size()) * 2 + 1 + (weight_load ? 1 : 0);
  const std::int64_t total = waves_per_pass * o.repeats;
  std::int64_t done = 0, rid = 0;
  std::mt19937_64 rng(o.seed);
  const auto tick = [&] {
    if (progress) progress(++done, total);
  };
  for (std::int64_t r = 0; r < o.repeats; ++r) {
    for (const auto l : prompts) {
      for (const auto b : batches) {
        // A window of n tokens must outlast the one-token wave; on a loaded
        // host noise can invert the pair, so it is measured again (up to 4
        // times) rather than written down as a decode pass of no time.
        double first_s = 0, window_s = 0;
        for (int attempt = 0;; ++attempt) {
          first_s = wave_s(o, facts, b, l, 1, rng, &rid);
          window_s = wave_s(o, facts, b, l, o.decode_tok, rng, &rid);
          if (window_s > first_s) break;
          if (attempt == 3) {
            throw std::runtime_error(fmt::format(
                "batch {}, prompt {} tok: a window of {} new tokens took {:.4f} s, no longer than one token's {:.4f} s, four times "
                "over; the server's timing is noise at this size (profile with a larger --decode-tok)",
                b, l, o.decode_tok, window_s, first_s));
          }
        }
        tick();
        tick();
        const auto bd = static_cast<double>(b), ld = static_cast<double>(l), n = static_cast<double>(o.decode_tok);
        // The prefill iteration: every request admitted, its context computed, a first token each.
        rl::IterationPoint prefill;
        prefill.batch = bd;
        prefill.prefill_requests = bd;
        prefill.prefill_tok = bd * ld;
        prefill.prefill_longest_tok = ld;
        prefill.kv_tok = bd * ld;
        prefill.time_s = first_s;
        p.iterations.push_back(prefill);
        // The decode iterations after it, at the window's mean KV.
        rl::IterationPoint decode;
        decode.batch = bd;
        decode.kv_tok = bd * (ld + n / 2.0);
        decode.time_s = (window_s - first_s) / (n - 1.0);
        p.iterations.push_back(decode);
      }
    }
    // An abort of every slot running, well before its end.
    const std::int64_t abort_new = std::max<std::int64_t>(
        o.decode_tok, facts.context_tok > 0 ? std::min<std::int64_t>(4096, facts.context_tok - prompts.front() - 1) : 4096);
    p.aborts.push_back(abort_point(o, facts, facts.slots, prompts.front(), abort_new, rng, &rid));
    tick();
    if (weight_load) {
      if (facts.model_path.empty()) {
        throw std::runtime_error(fmt::format("{}/get_server_info names no model_path to reload (profile without the weight load)", o.url));
      }
      const auto start = Clock::now();
      const auto reply =
          post_or_throw(o.url, "/update_weights_from_disk", nlohmann::json{{"model_path", facts.model_path}}.dump(), 5, o.timeout_s);
      const double took_s = seconds_since(start);
      nlohmann::json doc;
      if (base::parse_json(reply, doc) || !doc.is_object() || !doc.contains("success") || !doc["success"].is_boolean() ||
          !doc["success"].get<bool>()) {
        throw std::runtime_error(fmt::format("{}/update_weights_from_disk: {}", o.url, http::error_message_of(reply)));
      }
      p.sync_s.push_back(took_s);
      tick();
    }
  }
  return p;
}

}  // namespace april::live
