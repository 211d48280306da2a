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

#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/http_calls.hpp"
#include "adapters/live/http_stream.hpp"
#include "base/json_value.hpp"

namespace april::live {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The bodies of B identical greedy requests (prompts of random ids, each
// its own rid), each to run exactly `max_new` tokens.
std::vector<nlohmann::json> wave_bodies(const HttpProfileOptions& o, const ServerDialect& d, const ServerFacts& facts, std::int64_t batch,
                                        std::int64_t prompt_tok, std::int64_t max_new, std::mt19937_64& rng, std::int64_t* rid) {
  std::uniform_int_distribution<std::int32_t> id(1, o.max_token_id);
  std::vector<nlohmann::json> bodies;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(prompt_tok));
    for (auto& t : ids) t = id(rng);
    bodies.push_back(d.profile_body(ids, max_new, fmt::format("april-profile-{}", (*rid)++), facts));
  }
  return bodies;
}

// Each body a POST of the dialect's generate route on a thread of its own, all at once.
std::vector<std::future<std::string>> send_all(const HttpProfileOptions& o, const ServerDialect& d,
                                               const std::vector<nlohmann::json>& bodies) {
  std::vector<std::future<std::string>> replies;
  for (const auto& body : bodies) {
    replies.push_back(std::async(std::launch::async,
                                 [&o, &d, text = body.dump()] { return post_or_throw(o.url, d.generate_route(), text, 5, o.timeout_s); }));
  }
  return replies;
}

// B requests sent at once; the seconds until the last has answered, each
// checked to have run its `max_new` tokens.
double wave_s(const HttpProfileOptions& o, const ServerDialect& d, const ServerFacts& facts, std::int64_t batch, std::int64_t prompt_tok,
              std::int64_t max_new, std::mt19937_64& rng, std::int64_t* rid) {
  const auto bodies = wave_bodies(o, d, facts, batch, prompt_tok, max_new, rng, rid);
  const auto start = Clock::now();
  auto replies = send_all(o, d, bodies);
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
    const auto reply = d.parse_reply(text, o.url + d.generate_route() + " reply");
    if (static_cast<std::int64_t>(reply.output_ids.size()) != max_new) {
      throw std::runtime_error(fmt::format("{}{}: a profile request ran {} tokens, not the {} asked with ignore_eos", o.url,
                                           d.generate_route(), reply.output_ids.size(), max_new));
    }
  }
  return took_s;
}

// Requests the server runs now: /v1/loads' num_running_reqs (SGLang, and
// april serve under either API), else the dialect's Prometheus gauge summed
// over its labels (/metrics: vLLM's vllm:num_requests_running, SGLang's
// sglang:num_running_reqs); none when the server says neither.
std::optional<std::int64_t> running_requests(const HttpProfileOptions& o, const ServerDialect& d) {
  try {
    nlohmann::json doc;
    if (!base::parse_json(get_or_throw(o.url, "/v1/loads", 5, 5), doc) && doc.is_object() && doc.contains("loads") &&
        doc["loads"].is_array() && !doc["loads"].empty() && doc["loads"][0].is_object() && doc["loads"][0].contains("num_running_reqs") &&
        doc["loads"][0]["num_running_reqs"].is_number_integer()) {
      return doc["loads"][0]["num_running_reqs"].get<std::int64_t>();
    }
  } catch (const std::exception&) {
    // No /v1/loads (vLLM): its metrics below.
  }
  try {
    const auto text = get_or_throw(o.url, "/metrics", 5, 5);
    const std::string_view gauge = d.running_requests_metric();
    std::optional<double> sum;
    for (std::size_t at = 0; at < text.size();) {
      auto end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const auto line = std::string_view(text).substr(at, end - at);
      at = end + 1;
      if (!line.starts_with(gauge)) continue;
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

// Each body a request the abort stops (ServerDialect::run_abortable: over
// vLLM's API a stream, which the abort closes), on a thread of its own.
std::vector<std::future<void>> send_abortable(const HttpProfileOptions& o, const ServerDialect& d,
                                              const std::vector<nlohmann::json>& bodies,
                                              std::vector<std::shared_ptr<StreamCancel>>& cancels) {
  std::vector<std::future<void>> replies;
  for (const auto& body : bodies) {
    cancels.push_back(std::make_shared<StreamCancel>());
    replies.push_back(
        std::async(std::launch::async, [&o, &d, body, cancel = cancels.back()] { d.run_abortable(o.url, body, 5, o.timeout_s, *cancel); }));
  }
  return replies;
}

// B requests running, then abort_all: seconds until all have answered.
rl::AbortPoint abort_point(const HttpProfileOptions& o, const ServerDialect& d, const ServerFacts& facts, std::int64_t batch,
                           std::int64_t prompt_tok, std::int64_t max_new, std::mt19937_64& rng, std::int64_t* rid) {
  std::vector<std::shared_ptr<StreamCancel>> cancels;
  const auto bodies = wave_bodies(o, d, facts, batch, prompt_tok, max_new, rng, rid);
  auto replies = send_abortable(o, d, bodies, cancels);
  // Running once the server has them all (running_requests); a server that
  // does not say gets a quarter second.
  const auto sent = Clock::now();
  while (seconds_since(sent) < 5) {
    const auto running = running_requests(o, d);
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
        // The requests' streams closed, where the API aborts so, and the server's abort.
        for (const auto& c : cancels) c->cancel();
        d.abort_server(o.url, 5, 30);
        last = Clock::now();
      }
    }
    try {
      r.get();
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  // Closing a stream ends it at once for the client; a vLLM server frees the
  // request when it next sees the connection closed. The abort lasts until
  // the server runs none of them (where it says), at most 5 s more.
  if (d.abort_ends_at_the_client()) {
    const auto closed = Clock::now();
    while (seconds_since(closed) < 5) {
      const auto running = running_requests(o, d);
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
  const ServerDialect& d = server_dialect(o.api);
  const ServerFacts facts = d.facts(o.url, o.slots);
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
  const char* weight_route = d.weight_load_route();  // none over vLLM's API
  const bool weight_load = o.weight_load && weight_route != nullptr;
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
          first_s = wave_s(o, d, facts, b, l, 1, rng, &rid);
          window_s = wave_s(o, d, facts, b, l, o.decode_tok, rng, &rid);
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
    p.aborts.push_back(abort_point(o, d, facts, facts.slots, prompts.front(), abort_new, rng, &rid));
    tick();
    if (weight_load) {
      if (facts.model_path.empty()) {
        throw std::runtime_error(fmt::format("{}/get_server_info names no model_path to reload (profile without the weight load)", o.url));
      }
      const auto start = Clock::now();
      const auto reply = post_or_throw(o.url, weight_route, nlohmann::json{{"model_path", facts.model_path}}.dump(), 5, o.timeout_s);
      const double took_s = seconds_since(start);
      nlohmann::json doc;
      if (base::parse_json(reply, doc) || !doc.is_object() || !doc.contains("success") || !doc["success"].is_boolean() ||
          !doc["success"].get<bool>()) {
        throw std::runtime_error(fmt::format("{}{}: {}", o.url, weight_route, http::error_message_of(reply)));
      }
      p.sync_s.push_back(took_s);
      tick();
    }
  }
  return p;
}

}  // namespace april::live
