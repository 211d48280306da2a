#pragma once
// april serve's vLLM-compatible routes (adapters/http/openai_protocol.hpp):
// POST /v1/completions and /v1/chat/completions, streamed or not, and GET
// /v1/models, so that the openai SDKs, and `april live --engine-api vllm`,
// are served without vLLM.
#include <optional>

#include "adapters/live/engine_server.hpp"
#include "cli/serve_http.hpp"
#include "cli/serve_open_requests.hpp"
#include "hf/chat_template.hpp"
#include "hf/tokenizer.hpp"

namespace april::cli {

struct OpenAIText {
  std::optional<hf::Tokenizer> tokenizer;  // the checkpoint's tokenizer.json: text prompts, text out, stop strings
  std::optional<hf::ChatFamily> chat;      // the chat template of /v1/chat/completions
};

// `text` must outlive the server.
void add_openai_routes(HttpServer& svr, live::EngineServer& engine, OpenRequests& open, const OpenAIText& text);

}  // namespace april::cli
