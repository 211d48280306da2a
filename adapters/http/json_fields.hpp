#pragma once
// What the HTTP protocols' parsers share (sglang_protocol.cpp,
// openai_protocol.cpp): a body read as one JSON object, token-id arrays, and
// a field the engine serves only at its default. Every refusal is a
// base::ConfigError naming the JSON path.
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/json_value.hpp"

namespace april::http::detail {

inline constexpr std::int64_t kMaxTokenId = std::numeric_limits<std::int32_t>::max();

// `body` parsed into `doc` (which the value refers to), refused unless an object.
inline base::JsonValue parse_object(const std::string& body, const std::string& source, nlohmann::json& doc) {
  if (const auto e = base::parse_json(body, doc)) {
    throw base::ConfigError(fmt::format("{}: not JSON at byte {}: {}", source, e->byte, e->reason));
  }
  base::JsonValue v(doc, source);
  if (!v.is_object()) v.fail("the body is not a JSON object");
  return v;
}

inline std::vector<std::int32_t> token_ids(const base::JsonValue& v) {
  std::vector<std::int32_t> out;
  for (const auto id : v.integers(0, kMaxTokenId)) out.push_back(static_cast<std::int32_t>(id));
  return out;
}

// A field the engine cannot honour is accepted only at its default.
inline void refuse_unless(const base::JsonValue& v, const char* key, double default_value, const char* why) {
  const auto f = v.find(key);
  if (!f) return;
  if (f->number(-1e300, 1e300) != default_value) f->fail(fmt::format("only {} is served ({})", default_value, why));
}

}  // namespace april::http::detail
