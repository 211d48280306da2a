#pragma once
// april serve's vLLM-compatible routes (adapters/http/openai_protocol.hpp):
// POST /v1/completions, streamed or not, and GET /v1/models, so that
// `april live --engine-api vllm` is tested here without vLLM.
#include "adapters/live/engine_server.hpp"
#include "cli/serve_http.hpp"
#include "cli/serve_open_requests.hpp"

namespace april::cli {

void add_openai_routes(HttpServer& svr, live::EngineServer& engine, OpenRequests& open);

}  // namespace april::cli
