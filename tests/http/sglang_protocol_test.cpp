// SGLang's /generate and /abort_request bodies as april serve reads them,
// and the reply it writes: the fields slime sends, SGLang's defaults, the
// refusals by JSON path, and the reply's layout as slime and AReaL read it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "adapters/http/sglang_protocol.hpp"
#include "base/config.hpp"

namespace april::http {
namespace {

std::string error_of(const std::string& body) {
  try {
    (void)parse_generate_call(body, "POST /generate");
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SglangProtocol, ReadsWhatSlimeSends) {
  // slime's sglang_rollout.py request: no rid, no stream; sampling fields it always sets.
  const auto c = parse_generate_call(
      R"({"input_ids": [1, 2, 3], "return_logprob": true, "sampling_params": {"temperature": 0.8, "top_p": 0.95, "top_k": -1,
          "max_new_tokens": 64, "stop": null, "stop_token_ids": [151645], "skip_special_tokens": false, "no_stop_trim": true,
          "spaces_between_special_tokens": false, "sampling_seed": 11}})",
      "POST /generate");
  EXPECT_EQ(c.input_ids, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(c.rid, "");
  EXPECT_EQ(c.max_new_tokens, 64);
  EXPECT_DOUBLE_EQ(c.temperature, 0.8);
  EXPECT_DOUBLE_EQ(c.top_p, 0.95);
  EXPECT_EQ(c.stop_token_ids, std::vector<std::int32_t>{151645});
  EXPECT_TRUE(c.return_logprob);
  EXPECT_EQ(c.sampling_seed, 11u);
  // SGLang's defaults for what is left out.
  const auto d = parse_generate_call(R"({"input_ids": [7]})", "POST /generate");
  EXPECT_EQ(d.max_new_tokens, 128);
  EXPECT_DOUBLE_EQ(d.temperature, 1.0);
  EXPECT_DOUBLE_EQ(d.top_p, 1.0);
  EXPECT_FALSE(d.ignore_eos);
  EXPECT_FALSE(d.return_logprob);
  EXPECT_FALSE(d.sampling_seed.has_value());
  // Any 64-bit seed (Python's ints are unbounded; april's seeds use all 64 bits).
  EXPECT_EQ(parse_generate_call(R"({"input_ids": [7], "sampling_params": {"sampling_seed": 18446744073709551615}})", "x").sampling_seed,
            18446744073709551615ULL);
  EXPECT_THROW((void)parse_generate_call(R"({"input_ids": [7], "sampling_params": {"sampling_seed": -1}})", "x"), base::ConfigError);
}

TEST(SglangProtocol, PauseBodies) {
  EXPECT_TRUE(parse_pause_call("", "x").abort_in_flight);  // older SGLang sends no body: abort
  EXPECT_TRUE(parse_pause_call(R"({"mode": "abort"})", "x").abort_in_flight);
  EXPECT_FALSE(parse_pause_call(R"({"mode": "in_place"})", "x").abort_in_flight);
  EXPECT_THROW((void)parse_pause_call(R"({"mode": "retract"})", "x"), base::ConfigError);
}

TEST(SglangProtocol, WeightUpdateBodies) {
  const auto u = parse_update_weights_call(R"({"model_path": "/ckpt/v3", "weight_version": "3", "flush_cache": true})", "x");
  EXPECT_EQ(u.model_path, "/ckpt/v3");
  EXPECT_EQ(u.weight_version, "3");
  EXPECT_FALSE(u.abort_all_requests);
  EXPECT_THROW((void)parse_update_weights_call(R"({"weight_version": "3"})", "x"), base::ConfigError);
  EXPECT_THROW((void)parse_update_weights_call(R"({"model_path": "/c", "load_format": "dummy"})", "x"), base::ConfigError);
  const auto j = nlohmann::json::parse(update_weights_reply_json(false, "no such folder"));
  EXPECT_EQ(j["success"], false);
  EXPECT_EQ(j["message"], "no such folder");
}

TEST(SglangProtocol, RefusesWhatItCannotServeByPath) {
  EXPECT_NE(error_of(R"({"input_ids": [1], "sampling_params": {"top_k": 20}})").find("POST /generate: /sampling_params/top_k: top-k"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"input_ids": [1], "sampling_params": {"repetition_penalty": 1.1}})").find("/sampling_params/repetition_penalty"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"input_ids": [1], "sampling_params": {"stop": "\n"}})").find("/sampling_params/stop: stop strings"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"input_ids": [1], "sampling_params": {"max_new_tokens": 0}})").find("/sampling_params/max_new_tokens"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"input_ids": [1, -4]})").find("/input_ids/1"), std::string::npos) << error_of(R"({"input_ids": [1, -4]})");
  EXPECT_NE(error_of(R"({"input_ids": [[1], [2]]})").find("a batch of prompts"), std::string::npos);
  EXPECT_NE(error_of(R"({"text": "hi"})").find("/text: text prompts are not served"), std::string::npos);
  EXPECT_NE(error_of(R"({"input_ids": [1], "stream": true})").find("/stream"), std::string::npos);
  EXPECT_NE(error_of(R"({"input_ids": [1], "lora_path": "x"})").find("/lora_path: an unknown field"), std::string::npos);
  EXPECT_NE(error_of(R"({"rid": "a"})").find("/input_ids: missing"), std::string::npos) << error_of(R"({"rid": "a"})");
  EXPECT_NE(error_of("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{\"input_ids\": [1,").find("POST /generate: not JSON at byte"), std::string::npos);
  // Defaults are accepted where the engine cannot honour other values.
  EXPECT_EQ(error_of(R"({"input_ids": [1], "sampling_params": {"top_k": -1, "min_p": 0, "n": 1, "stop": [], "frequency_penalty": 0}})"),
            "no error");
}

TEST(SglangProtocol, AbortBodies) {
  EXPECT_TRUE(parse_abort_call(R"({"abort_all": true})", "x").abort_all);
  EXPECT_EQ(parse_abort_call(R"({"rid": "job-7"})", "x").rid, "job-7");
  EXPECT_FALSE(parse_abort_call("", "x").abort_all);  // SGLang's defaults: nothing aborted
  EXPECT_THROW((void)parse_abort_call(R"({"rid": 7})", "x"), base::ConfigError);
}

TEST(SglangProtocol, RepliesAsSlimeAndArealReadThem) {
  GenerateOutcome o;
  o.rid = "r1";
  o.output_ids = {5, 6};
  o.output_logprobs = {-0.5f, -1.25f};
  o.finish = FinishKind::Abort;
  o.abort_message = "Abort requested";
  o.prompt_tokens = 3;
  o.return_logprob = true;
  const auto j = nlohmann::json::parse(generate_reply_json(o));
  EXPECT_EQ(j["output_ids"], nlohmann::json({5, 6}));
  const auto& m = j["meta_info"];
  EXPECT_EQ(m["id"], "r1");
  EXPECT_EQ(m["finish_reason"]["type"], "abort");
  EXPECT_TRUE(m["finish_reason"]["status_code"].is_null());  // a user abort: HTTP 200 with the partial output
  EXPECT_EQ(m["completion_tokens"], 2);
  EXPECT_EQ(m["prompt_tokens"], 3);
  EXPECT_EQ(m["weight_version"], "default");
  // [logprob, token id, text]: x[1] is the token and x[0] its log-prob.
  EXPECT_EQ(m["output_token_logprobs"], nlohmann::json::parse("[[-0.5, 5, null], [-1.25, 6, null]]"));
  o.finish = FinishKind::Stop;
  o.matched_stop = 6;
  EXPECT_EQ(nlohmann::json::parse(generate_reply_json(o))["meta_info"]["finish_reason"],
            nlohmann::json::parse(R"({"type": "stop", "matched": 6})"));
  o.finish = FinishKind::Length;
  o.return_logprob = false;
  const auto l = nlohmann::json::parse(generate_reply_json(o));
  EXPECT_EQ(l["meta_info"]["finish_reason"], nlohmann::json::parse(R"({"type": "length", "length": 2})"));
  EXPECT_FALSE(l["meta_info"].contains("output_token_logprobs"));
  EXPECT_EQ(nlohmann::json::parse(error_json("bad"))["error"]["message"], "bad");
}

// Replies as SGLang versions write them: output_ids or the older token_ids,
// or only the log-prob triples; unknown fields ignored; what cannot be read
// refused by path.
TEST(SglangProtocol, ReadsRepliesOfEveryVersion) {
  const auto r = parse_generate_reply(
      R"({"text": "x", "output_ids": [5, 6], "meta_info": {"id": "a", "finish_reason": {"type": "abort", "message": "Abort in waiting queue",
          "status_code": null}, "output_token_logprobs": [[-0.5, 5, null], [-1.0, 6, "y"]], "weight_version": "3", "new_field": 1}})",
      "reply");
  EXPECT_EQ(r.output_ids, (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(r.output_logprobs, (std::vector<float>{-0.5f, -1.0f}));
  EXPECT_EQ(r.finish, FinishKind::Abort);
  EXPECT_EQ(r.abort_message, "Abort in waiting queue");
  EXPECT_EQ(r.weight_version, "3");
  const auto old = parse_generate_reply(R"({"token_ids": [7], "meta_info": {"finish_reason": {"type": "length", "length": 1}}})", "reply");
  EXPECT_EQ(old.output_ids, std::vector<std::int32_t>{7});
  EXPECT_TRUE(old.output_logprobs.empty());
  const auto triples = parse_generate_reply(R"({"meta_info": {"finish_reason": {"type": "stop", "matched": 2},
      "output_token_logprobs": [[-0.25, 9, null], [-0.75, 2, null]]}})",
                                            "reply");
  EXPECT_EQ(triples.output_ids, (std::vector<std::int32_t>{9, 2}));
  EXPECT_EQ(triples.finish, FinishKind::Stop);
  const auto error_of_reply = [](const std::string& body) {
    try {
      (void)parse_generate_reply(body, "reply");
    } catch (const base::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of_reply(R"({"output_ids": [1], "meta_info": {}})").find("reply: /meta_info/finish_reason: missing"), std::string::npos);
  EXPECT_NE(error_of_reply(R"({"output_ids": [1], "meta_info": {"finish_reason": {"type": "eos"}}})").find("/meta_info/finish_reason/type"),
            std::string::npos);
  EXPECT_NE(error_of_reply(R"({"output_ids": [1, 2], "meta_info": {"finish_reason": {"type": "length"},
      "output_token_logprobs": [[-1, 1, null]]}})")
                .find("differ from output_ids"),
            std::string::npos);
  EXPECT_NE(error_of_reply(R"({"meta_info": {"finish_reason": {"type": "length"}}})").find("no tokens to read"), std::string::npos);
  EXPECT_NE(error_of_reply("<html>502</html>").find("reply: not JSON"), std::string::npos);
  EXPECT_EQ(error_message_of(R"({"error": {"message": "bad"}})"), "bad");
  EXPECT_EQ(error_message_of(R"({"object": "error", "message": "flat"})"), "flat");
  EXPECT_EQ(error_message_of("Internal Server Error"), "Internal Server Error");
}

}  // namespace
}  // namespace april::http
