// libFuzzer target: vLLM's /v1/completions as april reads it: a request
// body as `april serve` parses it, as a completion and as a chat (and the
// events it then writes), and a
// server's event stream as `april live --engine-api vllm` reads it, fed in
// two pieces split where the input's first byte says. A refusal is a
// ConfigError naming what is wrong; anything else escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "adapters/http/openai_protocol.hpp"
#include "base/config.hpp"
#include "tests/fuzz/fuzz_refusal.hpp"

using april::fuzz::refused_or_read;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  refused_or_read([&] {
    const auto c = april::http::parse_completion_call(text, "POST /v1/completions");
    april::http::CompletionChunk chunk;
    chunk.id = c.generate.rid;
    chunk.logprobs = c.logprobs;
    chunk.delta_ids = c.generate.input_ids;
    chunk.delta_logprobs.assign(c.generate.input_ids.size(), -1.5f);
    chunk.finish = april::http::FinishKind::Length;
    (void)april::http::completion_chunk_event(chunk);
    (void)april::http::completion_reply_json(chunk, 1);
  });
  refused_or_read([&] {
    const auto c = april::http::parse_chat_call(text, "POST /v1/chat/completions");
    april::http::CompletionChunk chunk;
    chunk.chat = true;
    chunk.first = true;
    chunk.logprobs = c.logprobs;
    chunk.text = c.messages.back().content;
    chunk.stop_string = c.stop.empty() ? std::optional<std::string>() : c.stop.front();
    chunk.finish = april::http::FinishKind::Stop;
    (void)april::http::completion_chunk_event(chunk);
    (void)april::http::completion_reply_json(chunk, 1);
  });
  refused_or_read([&] {
    april::http::CompletionStreamReader r("stream");
    const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
    r.feed(text.data(), cut);
    r.feed(text.data() + cut, size - cut);
    (void)r.reply();
  });
  return 0;
}
