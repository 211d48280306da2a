#pragma once
// --engines URL,...: the servers a live command drives, as given.
#include <string>
#include <vector>

namespace april::cli {

// "a,b" -> {"a", "b"}; an empty item is refused (std::invalid_argument).
std::vector<std::string> split_urls(const std::string& text);

// --engine-api: true for "vllm" (vLLM's /v1/completions), false for
// "sglang" (SGLang's native API); std::invalid_argument otherwise.
bool engine_api_is_vllm(const std::string& api);

}  // namespace april::cli
