#include "cli/engine_urls.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace april::cli {

std::vector<std::string> split_urls(const std::string& text) {
  std::vector<std::string> urls;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw std::invalid_argument(fmt::format("--engines '{}': an empty URL (expected http://host:port,...)", text));
    urls.push_back(std::move(item));
    if (comma == std::string::npos) return urls;
    start = comma + 1;
  }
}

bool engine_api_is_vllm(const std::string& api) {
  if (api == "vllm") return true;
  if (api == "sglang") return false;
  throw std::invalid_argument(fmt::format("--engine-api '{}': sglang or vllm", api));
}

}  // namespace april::cli
