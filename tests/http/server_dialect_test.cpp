// Each server API's dialect sends what its server reads: the bodies byte for
// byte as the HTTP backend and the profiler sent them before the dialects
// held them, read back by april serve's parsers of the same API (SGLang's
// GenerateReqInput, vLLM's CompletionRequest), and its routes and metric
// names; then on the wire, against a server that records what it is sent.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "adapters/http/openai_protocol.hpp"
#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/http_stream.hpp"
#include "adapters/live/server_dialect.hpp"

namespace april::live {
namespace {

SampleSpec spec() {
  SampleSpec s;
  s.ids = {1, 2, 3, 40};
  s.max_new_tok = 16;
  s.temperature = 0.7;
  s.top_p = 0.9;
  s.seed = 0xfedcba9876543210ull;  // past INT64_MAX: vLLM's signed seed
  s.stop_token_ids = {151645, 151643};
  return s;
}

TEST(ServerDialect, TheFactoryPicksEachApisOwn) {
  EXPECT_EQ(&server_dialect(ServerApi::kSglang), &sglang_dialect());
  EXPECT_EQ(&server_dialect(ServerApi::kVllm), &vllm_dialect());
  EXPECT_STREQ(sglang_dialect().name(), "SGLang's HTTP API");
  EXPECT_STREQ(vllm_dialect().name(), "vLLM's /v1/completions");
}

TEST(ServerDialect, SglangSendsAGenerateReqInputWithInputIdsAndSamplingParams) {
  const auto& d = sglang_dialect();
  auto body = d.sample_body(spec());
  d.name_request(body, "april-7-3", "qwen3");
  EXPECT_EQ(
      body.dump(),
      R"({"input_ids":[1,2,3,40],"return_logprob":true,"rid":"april-7-3","sampling_params":{"max_new_tokens":16,"no_stop_trim":true,)"
      R"("sampling_seed":18364758544493064720,"skip_special_tokens":false,"stop_token_ids":[151645,151643],"temperature":0.7,"top_p":0.9}})");
  EXPECT_FALSE(body.contains("model"));  // SGLang's API names no model
  const auto call = http::parse_generate_call(body.dump(), "POST /generate");
  EXPECT_EQ(call.input_ids, spec().ids);
  EXPECT_EQ(call.rid, "april-7-3");
  EXPECT_EQ(call.max_new_tokens, 16);
  EXPECT_EQ(call.temperature, 0.7);
  EXPECT_EQ(call.top_p, 0.9);
  EXPECT_EQ(call.stop_token_ids, spec().stop_token_ids);
  EXPECT_EQ(call.sampling_seed, spec().seed);
  EXPECT_TRUE(call.return_logprob);
  EXPECT_FALSE(call.ignore_eos);

  ServerFacts facts;
  facts.name = "server";
  const auto profile = d.profile_body({9, 8}, 5, "april-profile-4", facts);
  EXPECT_EQ(profile.dump(),
            R"({"input_ids":[9,8],"rid":"april-profile-4","sampling_params":{"ignore_eos":true,"max_new_tokens":5,"temperature":0}})");
  const auto greedy = http::parse_generate_call(profile.dump(), "POST /generate");
  EXPECT_TRUE(greedy.ignore_eos);
  EXPECT_EQ(greedy.max_new_tokens, 5);
  EXPECT_EQ(greedy.temperature, 0);
}

TEST(ServerDialect, VllmSendsAStreamedCompletionOfThePromptsIdsNamingItsModel) {
  const auto& d = vllm_dialect();
  auto body = d.sample_body(spec());
  d.name_request(body, "april-7-3", "qwen3");
  EXPECT_EQ(body.dump(),
            R"({"frequency_penalty":0.0,"ignore_eos":false,"include_stop_str_in_output":true,"logprobs":0,"max_tokens":16,"min_p":0.0,)"
            R"("model":"qwen3","n":1,"presence_penalty":0.0,"prompt":[1,2,3,40],"repetition_penalty":1.0,"request_id":"april-7-3",)"
            R"("return_token_ids":true,"return_tokens_as_token_ids":true,"seed":-81985529216486896,"skip_special_tokens":false,)"
            R"("stop_token_ids":[151645,151643],"stream":true,"temperature":0.7,"top_k":-1,"top_p":0.9})");
  const auto call = http::parse_completion_call(body.dump(), "POST /v1/completions");
  EXPECT_EQ(call.generate.input_ids, spec().ids);
  EXPECT_EQ(call.generate.rid, "april-7-3");
  EXPECT_EQ(call.model, "qwen3");
  EXPECT_EQ(call.generate.max_new_tokens, 16);
  EXPECT_EQ(call.generate.temperature, 0.7);
  EXPECT_EQ(call.generate.top_p, 0.9);
  EXPECT_EQ(call.generate.stop_token_ids, spec().stop_token_ids);
  EXPECT_EQ(call.generate.sampling_seed, spec().seed);
  EXPECT_TRUE(call.stream);
  EXPECT_TRUE(call.logprobs);

  ServerFacts facts;
  facts.name = "qwen3";
  const auto profile = d.profile_body({9, 8}, 5, "april-profile-4", facts);
  EXPECT_EQ(
      profile.dump(),
      R"({"ignore_eos":true,"logprobs":0,"max_tokens":5,"min_tokens":0,"model":"qwen3","prompt":[9,8],"request_id":"april-profile-4",)"
      R"("return_token_ids":true,"return_tokens_as_token_ids":true,"temperature":0,"top_k":-1,"top_p":1.0})");
  const auto greedy = http::parse_completion_call(profile.dump(), "POST /v1/completions");
  EXPECT_TRUE(greedy.generate.ignore_eos);
  EXPECT_EQ(greedy.generate.max_new_tokens, 5);
  EXPECT_FALSE(greedy.stream);  // a wave's reply is read whole
}

TEST(ServerDialect, RoutesMetricsAndWeightLoadsAreEachServersOwn) {
  const auto& s = sglang_dialect();
  EXPECT_STREQ(s.generate_route(), "/generate");
  EXPECT_STREQ(s.running_requests_metric(), "sglang:num_running_reqs");
  EXPECT_STREQ(s.weight_load_route(), "/update_weights_from_disk");
  EXPECT_EQ(s.training_refusal(), "");
  EXPECT_FALSE(s.abort_ends_at_the_client());
  const auto& v = vllm_dialect();
  EXPECT_STREQ(v.generate_route(), "/v1/completions");
  EXPECT_STREQ(v.running_requests_metric(), "vllm:num_requests_running");
  EXPECT_EQ(v.weight_load_route(), nullptr);
  EXPECT_NE(v.training_refusal().find("vLLM has no /update_weights_from_disk"), std::string::npos);
  EXPECT_TRUE(v.abort_ends_at_the_client());
}

// A server on loopback that answers as SGLang's and vLLM's would and records
// every request: method, path and body.
struct Recorder {
  httplib::Server svr;
  std::thread serving;
  int port = 0;
  std::mutex mu;
  std::vector<std::string> seen;  // "METHOD PATH BODY"

  Recorder() {
    const auto record = [this](const httplib::Request& req) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(req.method + " " + req.path + " " + req.body);
    };
    svr.Get("/get_server_info", [record](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.set_content(R"({"max_running_requests": 6, "context_length": 4096, "model_path": "/m", "version": "x"})", "application/json");
    });
    svr.Get("/v1/models", [record](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.set_content(R"({"object": "list", "data": [{"id": "qwen3", "max_model_len": 2048}]})", "application/json");
    });
    svr.Post("/abort_request", [record](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.set_content("{}", "application/json");
    });
    svr.Post("/generate", [record](const httplib::Request& req, httplib::Response& res) {
      record(req);
      http::GenerateOutcome o;
      o.rid = "april-1-0";
      o.output_ids = {5, 6};
      o.output_logprobs = {-0.5f, -0.25f};
      o.return_logprob = true;
      res.set_content(http::generate_reply_json(o), "application/json");
    });
    svr.Post("/v1/completions", [record](const httplib::Request& req, httplib::Response& res) {
      record(req);
      http::CompletionChunk c;
      c.id = "cmpl-1";
      c.model = "qwen3";
      c.delta_ids = {5, 6};
      c.delta_logprobs = {-0.5f, -0.25f};
      c.logprobs = true;
      c.finish = http::FinishKind::Length;
      res.set_content(http::completion_chunk_event(c) + http::kStreamDone, "text/event-stream");
    });
    port = svr.bind_to_any_port("127.0.0.1");
    serving = std::thread([this] { svr.listen_after_bind(); });
    for (int i = 0; i < 2000 && !svr.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Recorder() {
    svr.stop();
    if (serving.joinable()) serving.join();
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(seen, {});
  }
};

TEST(ServerDialect, SglangOnTheWire) {
  Recorder r;
  ASSERT_GT(r.port, 0);
  const auto& d = sglang_dialect();
  const auto seat = d.seat(r.url(), 0, 5);
  EXPECT_EQ(seat.slots, 6);  // max_running_requests
  EXPECT_EQ(seat.model, "");
  EXPECT_EQ(d.seat(r.url(), 3, 5).slots, 3);  // given
  const auto facts = d.facts(r.url(), 0);
  EXPECT_EQ(facts.slots, 6);
  EXPECT_EQ(facts.context_tok, 4096);
  EXPECT_EQ(facts.model_path, "/m");
  d.abort_server(r.url(), 5, 5);
  auto body = d.sample_body(spec());
  d.name_request(body, "april-1-0", "");
  StreamCancel cancel;
  const auto reply = d.generate(r.url(), body, 5, 5, cancel);
  EXPECT_EQ(reply.output_ids, (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(reply.finish, http::FinishKind::Length);
  const auto seen = r.take();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0], "GET /get_server_info ");
  EXPECT_EQ(seen[1], "GET /get_server_info ");
  EXPECT_EQ(seen[2], "GET /get_server_info ");
  EXPECT_EQ(seen[3], R"(POST /abort_request {"abort_all": true})");
  EXPECT_EQ(http::parse_abort_call(seen[3].substr(std::string("POST /abort_request ").size()), "abort").abort_all, true);
  EXPECT_EQ(seen[4], "POST /generate " + body.dump());
}

TEST(ServerDialect, VllmOnTheWire) {
  Recorder r;
  ASSERT_GT(r.port, 0);
  const auto& d = vllm_dialect();
  const auto seat = d.seat(r.url(), 0, 5);
  EXPECT_EQ(seat.slots, 0);  // vLLM says none: as given
  EXPECT_EQ(seat.model, "qwen3");
  const auto facts = d.facts(r.url(), 4);
  EXPECT_EQ(facts.slots, 4);
  EXPECT_EQ(facts.context_tok, 2048);
  EXPECT_EQ(facts.name, "qwen3");
  EXPECT_THROW((void)d.facts(r.url(), 0), std::invalid_argument);  // the slots must be given
  d.abort_server(r.url(), 5, 5);                                   // nothing sent: the streams are closed instead
  auto body = d.sample_body(spec());
  d.name_request(body, "april-1-0", seat.model);
  StreamCancel cancel;
  const auto reply = d.generate(r.url(), body, 5, 5, cancel);
  EXPECT_EQ(reply.output_ids, (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(reply.finish, http::FinishKind::Length);
  const auto seen = r.take();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], "GET /v1/models ");
  EXPECT_EQ(seen[1], "GET /v1/models ");
  EXPECT_EQ(seen[2], "GET /v1/models ");
  EXPECT_EQ(seen[3], "POST /v1/completions " + body.dump());
}

}  // namespace
}  // namespace april::live
