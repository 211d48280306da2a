// SGLang's native HTTP API (and april serve's), as adapters/http/sglang_protocol.hpp
// writes and reads it: POST /generate (GenerateReqInput: input_ids, rid,
// return_logprob, sampling_params), POST /abort_request {"abort_all": true},
// GET /get_server_info (max_running_requests, context_length, model_path,
// version), POST /update_weights_from_disk (with flush_cache, in
// http_calls.cpp's update_servers), and the Prometheus gauge
// sglang:num_running_reqs of its /metrics.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/http_calls.hpp"
#include "adapters/live/server_dialect.hpp"
#include "base/json_value.hpp"

namespace april::live {
namespace {

class SglangDialect final : public ServerDialect {
 public:
  [[nodiscard]] const char* name() const override { return "SGLang's HTTP API"; }
  [[nodiscard]] const char* generate_route() const override { return "/generate"; }

  [[nodiscard]] ServerSeat seat(const std::string& url, std::int64_t slots_given, double connect_s) const override {
    const auto body = get_or_throw(url, "/get_server_info", connect_s, connect_s * 2);
    std::int64_t n = 0;
    nlohmann::json doc;
    if (slots_given == 0 && !base::parse_json(body, doc) && doc.is_object() && doc.contains("max_running_requests")) {
      // A bound the server states must be one: 0, -5 or "8" would size the
      // batches by nothing (a server that states none is not bounded).
      const auto& m = doc["max_running_requests"];
      if (!m.is_number_integer() || m.get<std::int64_t>() < 1) {
        throw std::runtime_error(
            fmt::format("{}/get_server_info: max_running_requests is {}, where a count of at least 1 was expected "
                        "(or give --engine-slots N)",
                        url, m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
      }
      n = m.get<std::int64_t>();
    }
    return {slots_given > 0 ? slots_given : n, ""};
  }

  [[nodiscard]] ServerFacts facts(const std::string& url, std::int64_t slots_given) const override {
    ServerFacts f;
    nlohmann::json doc;
    const auto body = get_or_throw(url, "/get_server_info", 5, 30);
    if (base::parse_json(body, doc) || !doc.is_object())
      throw std::runtime_error(fmt::format("{}/get_server_info: not a JSON object", url));
    const auto integer = [&doc](const char* key) {
      return doc.contains(key) && doc[key].is_number_integer() ? doc[key].get<std::int64_t>() : std::int64_t{0};
    };
    f.slots = slots_given > 0 ? slots_given : integer("max_running_requests");
    f.context_tok = integer("context_length");
    if (doc.contains("model_path") && doc["model_path"].is_string()) f.model_path = doc["model_path"].get<std::string>();
    f.name = doc.contains("version") && doc["version"].is_string() ? doc["version"].get<std::string>() : std::string("server");
    if (f.slots < 1) throw std::runtime_error(fmt::format("{}/get_server_info: no max_running_requests to size the batches by", url));
    return f;
  }

  [[nodiscard]] nlohmann::json sample_body(const SampleSpec& s) const override {
    return {{"input_ids", s.ids},
            {"return_logprob", true},
            {"sampling_params",
             {{"max_new_tokens", s.max_new_tok},
              {"temperature", s.temperature},
              {"top_p", s.top_p},
              {"stop_token_ids", s.stop_token_ids},
              // The in-process backend's seed for a fresh sample (april serve then draws its
              // tokens); a resumed one draws from a seed of its own, as a server's token
              // index restarts at 0 and the same seed would replay the first draws.
              {"sampling_seed", s.seed},
              {"skip_special_tokens", false},
              {"no_stop_trim", true}}}};
  }

  [[nodiscard]] nlohmann::json profile_body(const std::vector<std::int32_t>& ids, std::int64_t max_new, const std::string& rid,
                                            const ServerFacts&) const override {
    return {{"input_ids", ids}, {"rid", rid}, {"sampling_params", {{"max_new_tokens", max_new}, {"temperature", 0}, {"ignore_eos", true}}}};
  }

  void name_request(nlohmann::json& body, const std::string& id, const std::string&) const override { body["rid"] = id; }

  // The cancel is not read: SGLang's abort is its server's (abort_server).
  [[nodiscard]] http::GenerateReply generate(const std::string& url, const nlohmann::json& body, double connect_s, double read_s,
                                             StreamCancel&) const override {
    return http::parse_generate_reply(generate_with_retries(url, body, connect_s, read_s), url + "/generate reply");
  }

  [[nodiscard]] http::GenerateReply parse_reply(const std::string& text, const std::string& source) const override {
    return http::parse_generate_reply(text, source);
  }

  void run_abortable(const std::string& url, const nlohmann::json& body, double connect_s, double read_s, StreamCancel&) const override {
    (void)post_or_throw(url, "/generate", body.dump(), connect_s, read_s);
  }

  void abort_server(const std::string& url, double connect_s, double read_s) const override {
    (void)post_or_throw(url, "/abort_request", R"({"abort_all": true})", connect_s, read_s);
  }
  // /abort_request answers once the requests have answered, aborted.
  [[nodiscard]] bool abort_ends_at_the_client() const override { return false; }
  [[nodiscard]] const char* running_requests_metric() const override { return "sglang:num_running_reqs"; }

  [[nodiscard]] const char* weight_load_route() const override { return "/update_weights_from_disk"; }
  [[nodiscard]] std::string training_refusal() const override { return ""; }
};

}  // namespace

const ServerDialect& sglang_dialect() {
  static const SglangDialect d;
  return d;
}

}  // namespace april::live
