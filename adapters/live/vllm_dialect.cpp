// vLLM's OpenAI-compatible API, as adapters/http/openai_protocol.hpp writes
// and reads it: POST /v1/completions (CompletionRequest: prompt token ids,
// model, request_id, every sampling field set), streamed and aborted by
// closing the stream (http_stream.hpp), GET /v1/models (the model a request
// names, its max_model_len), and the Prometheus gauge
// vllm:num_requests_running of its /metrics. It says nothing of its
// --max-num-seqs and has no /update_weights_from_disk.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "adapters/http/openai_protocol.hpp"
#include "adapters/live/http_calls.hpp"
#include "adapters/live/http_stream.hpp"
#include "adapters/live/server_dialect.hpp"
#include "base/json_value.hpp"

namespace april::live {
namespace {

// The first model of GET /v1/models' data (OpenAI's list; vLLM refuses a
// completion naming another), read from `body`; none when it names none.
std::optional<nlohmann::json> first_model(const std::string& body) {
  nlohmann::json doc;
  if (base::parse_json(body, doc) || !doc.is_object() || !doc.contains("data") || !doc["data"].is_array() || doc["data"].empty() ||
      !doc["data"][0].is_object() || !doc["data"][0].contains("id") || !doc["data"][0]["id"].is_string()) {
    return std::nullopt;
  }
  return doc["data"][0];
}

class VllmDialect final : public ServerDialect {
 public:
  [[nodiscard]] const char* name() const override { return "vLLM's /v1/completions"; }
  [[nodiscard]] const char* generate_route() const override { return "/v1/completions"; }

  // The slots as given: vLLM does not say its max_num_seqs over HTTP.
  [[nodiscard]] ServerSeat seat(const std::string& url, std::int64_t slots_given, double connect_s) const override {
    const auto body = get_or_throw(url, "/v1/models", connect_s, connect_s * 2);
    const auto m = first_model(body);
    if (!m) throw std::runtime_error(fmt::format("{}/v1/models: no model named (data[0].id): {}", url, body.substr(0, 200)));
    return {slots_given, (*m)["id"].get<std::string>()};
  }

  // The first model /v1/models lists (its id is each request's "model") and
  // its max_model_len; the slots as given.
  [[nodiscard]] ServerFacts facts(const std::string& url, std::int64_t slots_given) const override {
    ServerFacts f;
    const auto m = first_model(get_or_throw(url, "/v1/models", 5, 30));
    if (!m) throw std::runtime_error(fmt::format("{}/v1/models: no model named (data[0].id)", url));
    f.name = (*m)["id"].get<std::string>();
    f.model_path = f.name;
    if (m->contains("max_model_len") && (*m)["max_model_len"].is_number_integer())
      f.context_tok = (*m)["max_model_len"].get<std::int64_t>();
    f.slots = slots_given;
    if (f.slots < 1) throw std::invalid_argument("over vLLM's API the server's slots must be given (vLLM does not say its --max-num-seqs)");
    return f;
  }

  // Streamed, with every sampling field set, as vLLM fills unset ones from
  // the model's generation_config (Qwen's sets top_k 20); ids back both ways
  // (return_token_ids; "token_id:N" log-prob tokens on older servers); the
  // seed's 64 bits sent as vLLM's signed one. The "model" is set when it is
  // sent (name_request: the server's own).
  [[nodiscard]] nlohmann::json sample_body(const SampleSpec& s) const override {
    return {{"prompt", s.ids},
            {"max_tokens", s.max_new_tok},
            {"temperature", s.temperature},
            {"top_p", s.top_p},
            {"top_k", -1},
            {"min_p", 0.0},
            {"repetition_penalty", 1.0},
            {"presence_penalty", 0.0},
            {"frequency_penalty", 0.0},
            {"seed", static_cast<std::int64_t>(s.seed)},
            {"stop_token_ids", s.stop_token_ids},
            {"ignore_eos", false},
            {"skip_special_tokens", false},
            {"include_stop_str_in_output", true},
            {"logprobs", 0},
            {"return_token_ids", true},
            {"return_tokens_as_token_ids", true},
            {"n", 1},
            {"stream", true}};
  }

  // Every sampling field that could stop or shape it set (vLLM fills unset ones from generation_config).
  [[nodiscard]] nlohmann::json profile_body(const std::vector<std::int32_t>& ids, std::int64_t max_new, const std::string& rid,
                                            const ServerFacts& facts) const override {
    return {{"model", facts.name},
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
            {"request_id", rid}};
  }

  void name_request(nlohmann::json& body, const std::string& id, const std::string& model) const override {
    body["request_id"] = id;
    body["model"] = model;
  }

  [[nodiscard]] http::GenerateReply generate(const std::string& url, const nlohmann::json& body, double connect_s, double read_s,
                                             StreamCancel& cancel) const override {
    return completion_stream(url, body, connect_s, read_s, cancel);
  }

  [[nodiscard]] http::GenerateReply parse_reply(const std::string& text, const std::string& source) const override {
    return http::parse_completion_reply(text, source);
  }

  // Streamed, so that closing it aborts it.
  void run_abortable(const std::string& url, const nlohmann::json& body, double connect_s, double read_s,
                     StreamCancel& cancel) const override {
    auto doc = body;
    doc["stream"] = true;
    (void)completion_stream(url, doc, connect_s, read_s, cancel);
  }

  // vLLM's abort outside its dev mode is each open stream closed: nothing to send.
  void abort_server(const std::string&, double, double) const override {}
  // A vLLM server frees a request when it next sees its connection closed.
  [[nodiscard]] bool abort_ends_at_the_client() const override { return true; }
  [[nodiscard]] const char* running_requests_metric() const override { return "vllm:num_requests_running"; }

  [[nodiscard]] const char* weight_load_route() const override { return nullptr; }
  [[nodiscard]] std::string training_refusal() const override {
    return "training over vLLM's API is not built: vLLM has no /update_weights_from_disk, and its weight-update routes "
           "(/collective_rpc, /update_weights) are its dev mode's (docs/serve.md); run rollout only, or use SGLang's API";
  }
};

}  // namespace

const ServerDialect& vllm_dialect() {
  static const VllmDialect d;
  return d;
}

}  // namespace april::live
