// vLLM's /v1/completions as april reads and writes it: the body april live
// sends (every sampling field set), april serve's refusals by JSON path,
// and the stream reader on events split anywhere, in vLLM's layouts
// (token_ids, or "token_id:N" log-prob tokens on older servers), with its
// errors: an error event, a stream cut before its finish reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "adapters/http/openai_protocol.hpp"
#include "base/config.hpp"

namespace april::http {
namespace {

std::string call_error(const std::string& body) {
  try {
    (void)parse_completion_call(body, "POST /v1/completions");
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string stream_error(const std::string& text) {
  try {
    CompletionStreamReader r("stream");
    r.feed(text.data(), text.size());
    (void)r.reply();
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpenaiProtocol, ReadsWhatAprilLiveSends) {
  const auto c = parse_completion_call(
      R"({"model": "Qwen/Qwen3-0.6B", "prompt": [1, 2, 3], "max_tokens": 64, "temperature": 0.8, "top_p": 0.95, "top_k": -1,
          "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "seed": -5,
          "stop_token_ids": [151645], "ignore_eos": false, "skip_special_tokens": false, "include_stop_str_in_output": true,
          "logprobs": 0, "return_token_ids": true, "return_tokens_as_token_ids": true, "n": 1, "stream": true,
          "request_id": "april-7-3"})",
      "POST /v1/completions");
  EXPECT_EQ(c.generate.input_ids, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(c.generate.max_new_tokens, 64);
  EXPECT_DOUBLE_EQ(c.generate.temperature, 0.8);
  EXPECT_DOUBLE_EQ(c.generate.top_p, 0.95);
  // A signed seed is the client's 64 bits: read back as sent.
  EXPECT_EQ(c.generate.sampling_seed, static_cast<std::uint64_t>(std::int64_t{-5}));
  EXPECT_EQ(c.generate.stop_token_ids, std::vector<std::int32_t>{151645});
  EXPECT_EQ(c.generate.rid, "april-7-3");
  EXPECT_TRUE(c.stream);
  EXPECT_TRUE(c.logprobs);
  EXPECT_TRUE(c.generate.return_logprob);
  // OpenAI's defaults for what is left out: 16 tokens, no stream, no log-probs.
  const auto d = parse_completion_call(R"({"prompt": [7]})", "POST /v1/completions");
  EXPECT_EQ(d.generate.max_new_tokens, 16);
  EXPECT_FALSE(d.stream);
  EXPECT_FALSE(d.logprobs);
  EXPECT_FALSE(d.generate.sampling_seed.has_value());
}

TEST(OpenaiProtocol, RefusesByJsonPath) {
  EXPECT_NE(call_error(R"({"prompt": ""})").find("/prompt: an empty prompt"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [[1], [2]]})").find("/prompt: a batch"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": []})").find("/prompt: an empty prompt"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "n": 129})").find("/n:"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "n": 2, "best_of": 3})").find("/best_of: only n (2)"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "logprobs": 5})").find("/logprobs: top log-probs"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "top_k": 20})").find("/top_k"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "stop": [1]})").find("/stop/0:"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "include_stop_str_in_output": 1})").find("/include_stop_str_in_output"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "echo": true})").find("/echo"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "max_tokens": 0})").find("/max_tokens"), std::string::npos);
  EXPECT_NE(call_error(R"({"prompt": [1], "beam": 1})").find("beam"), std::string::npos);
  EXPECT_NE(call_error("[1]").find("not a JSON object"), std::string::npos);
}

TEST(OpenaiProtocol, ReadsTextPromptsStopStringsAndChoices) {
  const auto c =
      parse_completion_call(R"({"prompt": "2+2=", "stop": ["\n\n", "", "Question:"], "n": 3, "best_of": 3})", "POST /v1/completions");
  EXPECT_EQ(c.prompt_text, "2+2=");
  EXPECT_TRUE(c.generate.input_ids.empty());
  EXPECT_EQ(c.stop, (std::vector<std::string>{"\n\n", "Question:"}));  // an empty stop string is dropped, as vLLM does
  EXPECT_EQ(c.n, 3);
  EXPECT_EQ(parse_completion_call(R"({"prompt": [1], "stop": "END"})", "p").stop, std::vector<std::string>{"END"});
}

std::string chat_error(const std::string& body) {
  try {
    (void)parse_chat_call(body, "POST /v1/chat/completions");
  } catch (const base::JsonPathError& e) {
    return std::string(e.what()) + " [param " + param_of_path(e.path()) + "]";
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpenaiProtocol, ReadsChatCalls) {
  const auto c = parse_chat_call(R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]},
      {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "2+2?"}],
      "max_completion_tokens": 9, "logprobs": true, "top_logprobs": 0, "chat_template_kwargs": {"enable_thinking": false},
      "tools": [], "stream": true, "stream_options": {"include_usage": true}})",
                                 "POST /v1/chat/completions");
  EXPECT_TRUE(c.chat);
  ASSERT_EQ(c.messages.size(), 4u);
  EXPECT_EQ(c.messages[1].content, "Hi there");
  EXPECT_EQ(c.messages[2].role, "assistant");
  EXPECT_EQ(c.generate.max_new_tokens, 9);
  EXPECT_TRUE(c.max_tokens_given);
  EXPECT_TRUE(c.logprobs);
  EXPECT_EQ(c.enable_thinking, false);
  EXPECT_FALSE(parse_chat_call(R"({"messages": [{"role": "user", "content": "x"}]})", "p").max_tokens_given);
  // Refused by field, with OpenAI's param.
  EXPECT_NE(chat_error(R"({"messages": []})").find("/messages: no messages [param messages]"), std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "tool", "content": "x"}]})").find("[param messages.0.role]"), std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "y"}]})").find("only first"),
            std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]})").find("last message"),
            std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})")
                .find("[param messages.0.content.0"),
            std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})")
                .find("tool calls are not served [param tools]"),
            std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})").find("[param top_logprobs]"),
            std::string::npos);
  EXPECT_NE(chat_error(R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})").find("[param temperature]"),
            std::string::npos);
}

TEST(OpenaiProtocol, ErrorBodiesAsVllmWritesThem) {
  const auto e = nlohmann::json::parse(openai_error_json(400, "bad max_tokens", "max_tokens"));
  EXPECT_EQ(e["error"]["message"], "bad max_tokens");
  EXPECT_EQ(e["error"]["type"], "BadRequestError");
  EXPECT_EQ(e["error"]["param"], "max_tokens");
  EXPECT_EQ(e["error"]["code"], 400);
  const auto n = nlohmann::json::parse(openai_error_json(404, "no such model"));
  EXPECT_EQ(n["error"]["type"], "NotFoundError");
  EXPECT_TRUE(n["error"]["param"].is_null());
  EXPECT_EQ(param_of_path("/a~1b/0/c~0"), "a/b.0.c~");
}

TEST(OpenaiProtocol, WritesChatEvents) {
  CompletionChunk c;
  c.id = "chatcmpl-1";
  c.model = "m";
  c.chat = true;
  c.first = true;
  c.index = 2;
  c.text = "Hel";
  c.delta_ids = {5};
  const auto first = nlohmann::json::parse(completion_chunk_event(c).substr(6));
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["index"], 2);
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(first["choices"][0]["delta"]["content"], "Hel");
  c.first = false;
  c.finish = FinishKind::Stop;
  c.stop_string = "\n";
  const auto whole = nlohmann::json::parse(completion_reply_json(c, 4));
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "Hel");
  EXPECT_EQ(whole["choices"][0]["stop_reason"], "\n");
  EXPECT_EQ(whole["usage"]["total_tokens"], 5);
}

TEST(OpenaiProtocol, WritesEventsAClientReads) {
  CompletionChunk c;
  c.id = "cmpl-1";
  c.model = "m";
  c.logprobs = true;
  c.delta_ids = {5, 6};
  c.delta_logprobs = {-0.5f, -1.25f};
  std::string text = completion_chunk_event(c);
  c.delta_ids = {7};
  c.delta_logprobs = {-2.0f};
  c.finish = FinishKind::Stop;
  c.matched_stop = 7;
  text += completion_chunk_event(c) + completion_usage_event("cmpl-1", "m", 0, 3, 3) + kStreamDone;
  const auto event = nlohmann::json::parse(text.substr(6, text.find("\n\n") - 6));
  EXPECT_EQ(event["choices"][0]["token_ids"], nlohmann::json::array({5, 6}));
  EXPECT_EQ(event["choices"][0]["logprobs"]["tokens"], nlohmann::json::array({"token_id:5", "token_id:6"}));
  EXPECT_TRUE(event["choices"][0]["finish_reason"].is_null());
  // Read back fed one byte at a time: events split anywhere.
  CompletionStreamReader r("stream");
  for (const char ch : text) r.feed(&ch, 1);
  EXPECT_TRUE(r.done());
  const auto reply = r.reply();
  EXPECT_EQ(reply.output_ids, (std::vector<std::int32_t>{5, 6, 7}));
  EXPECT_EQ(reply.output_logprobs, (std::vector<float>{-0.5f, -1.25f, -2.0f}));
  EXPECT_EQ(reply.finish, FinishKind::Stop);
}

TEST(OpenaiProtocol, ReadsOlderAndNewerServers) {
  // An older vLLM: no token_ids, ids only as "token_id:N" (return_tokens_as_token_ids), CRLF lines, a comment.
  const std::string older =
      ": keep-alive\r\n\r\n"
      "data: {\"choices\": [{\"index\": 0, \"text\": \"a\", \"logprobs\": {\"tokens\": [\"token_id:11\"], \"token_logprobs\": [-1.0]}, "
      "\"finish_reason\": null}]}\r\n\r\n"
      "data: {\"choices\": [{\"index\": 0, \"text\": \"\", \"logprobs\": {\"tokens\": [], \"token_logprobs\": []}, \"finish_reason\": "
      "\"length\"}]}\r\n\r\ndata: [DONE]\r\n\r\n";
  CompletionStreamReader r("stream");
  r.feed(older.data(), older.size());
  EXPECT_EQ(r.reply().output_ids, std::vector<std::int32_t>{11});
  EXPECT_EQ(r.reply().finish, FinishKind::Length);
  // A 2026 vLLM answers an abort with finish_reason "abort" and the partial ids.
  const std::string aborted = R"(data: {"choices": [{"index": 0, "token_ids": [3, 4], "finish_reason": "abort"}]})"
                              "\n\n";
  CompletionStreamReader a("stream");
  a.feed(aborted.data(), aborted.size());
  EXPECT_EQ(a.reply().finish, FinishKind::Abort);
  EXPECT_EQ(a.reply().output_ids, (std::vector<std::int32_t>{3, 4}));
}

TEST(OpenaiProtocol, StreamErrorsNameWhatIsWrong) {
  EXPECT_NE(stream_error("data: {\"error\": {\"message\": \"KV cache is full\"}}\n\n").find("KV cache is full"), std::string::npos);
  EXPECT_NE(stream_error("data: <html>\n\n").find("event 1: not JSON"), std::string::npos);
  EXPECT_NE(stream_error(R"(data: {"choices": [{"token_ids": "1 2"}]})"
                         "\n\n")
                .find("/choices/0/token_ids"),
            std::string::npos);
  EXPECT_NE(stream_error(R"(data: {"choices": [{"token_ids": [1], "finish_reason": "error"}]})"
                         "\n\n")
                .find("'error' where stop, length or abort"),
            std::string::npos);
  // Tokens disagreeing between the two layouts, and tokens after the end.
  EXPECT_NE(stream_error(R"(data: {"choices": [{"token_ids": [1], "logprobs": {"tokens": ["token_id:2"]}}]})"
                         "\n\n")
                .find("differ from token_ids"),
            std::string::npos);
  EXPECT_NE(stream_error(R"(data: {"choices": [{"token_ids": [1], "finish_reason": "stop"}]})"
                         "\n\n"
                         R"(data: {"choices": [{"token_ids": [2]}]})"
                         "\n\n")
                .find("after the finish reason"),
            std::string::npos);
  // Cut before its finish reason: the tokens received are counted, not returned as a reply.
  EXPECT_NE(stream_error(R"(data: {"choices": [{"token_ids": [1, 2]}]})"
                         "\n\n")
                .find("ended before its finish reason (2 tokens received)"),
            std::string::npos);
  // An event never ended is bounded.
  const std::string endless(CompletionStreamReader::kMaxEventBytes + 10, 'x');
  EXPECT_NE(stream_error("data: " + endless).find("an event longer than"), std::string::npos);
}

}  // namespace
}  // namespace april::http
