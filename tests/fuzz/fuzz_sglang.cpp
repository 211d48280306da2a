// libFuzzer target: the bodies `april serve` reads (POST /generate and POST
// /abort_request in SGLang's layout), the reply written for what it
// accepts, and a server's reply as `april live --engines` reads it. A refusal is a ConfigError naming the JSON path; anything else
// escaping (the JSON library's own exceptions) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "adapters/http/sglang_protocol.hpp"
#include "base/config.hpp"
#include "tests/fuzz/fuzz_refusal.hpp"

using april::fuzz::refused_or_read;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  refused_or_read([&] {
    const auto c = april::http::parse_generate_call(body, "POST /generate");
    april::http::GenerateOutcome o;
    o.rid = c.rid;
    o.output_ids = c.input_ids;
    o.output_logprobs.assign(c.input_ids.size(), -1.5f);
    o.return_logprob = c.return_logprob;
    (void)april::http::generate_reply_json(o);
  });
  refused_or_read([&] { (void)april::http::parse_generate_reply(body, "reply"); });
  (void)april::http::error_message_of(body);
  refused_or_read([&] { (void)april::http::parse_pause_call(body, "POST /pause_generation"); });
  refused_or_read([&] { (void)april::http::parse_update_weights_call(body, "POST /update_weights_from_disk"); });
  refused_or_read([&] { (void)april::http::parse_abort_call(body, "POST /abort_request"); });
  return 0;
}
