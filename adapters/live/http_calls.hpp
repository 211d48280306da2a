#pragma once
// One HTTP call to an inference server, as every april client of one makes
// it (live::HttpBackend, the HTTP profiler): a POST or GET with timeouts,
// its failure named by URL and route, and told apart by kind, since a
// server that does not answer at all is another matter than one that
// answers an error. cpp-httplib (Debian's libcpp-httplib-dev).
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/http/sglang_protocol.hpp"

namespace httplib {
class Client;
enum class Error;
}  // namespace httplib

namespace april::live {

// No reply at all (no connection, or the connection closed before a whole
// reply): the one failure worth another try.
struct NoReply : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// No reply within the timeout: not tried again, but like NoReply a sign
// that the server, not the request, is at fault.
struct TimedOut : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The failure of a call to url + route that got no reply (httplib's
// `error`, `elapsed_s` after it was sent or after its last byte), as its
// kind: NoReply, TimedOut (elapsed near read_s), or a runtime_error.
[[noreturn]] void throw_no_reply(const std::string& url, const std::string& route, httplib::Error error, double elapsed_s, double read_s);

// A client of `url` (http://host:port) with these timeouts; throws
// std::invalid_argument for what is no such address.
std::unique_ptr<httplib::Client> http_client(const std::string& url, double connect_s, double read_s);

// A POST's reply body (status 200), or a runtime_error naming the URL and
// the route: NoReply, TimedOut, or the HTTP status with the server's message.
std::string post_or_throw(const std::string& url, const std::string& route, const std::string& body, double connect_s, double read_s);

// A GET's reply body, likewise.
std::string get_or_throw(const std::string& url, const std::string& route, double connect_s, double read_s);

// One /generate with `body` (its "rid" set), tried again (at most
// kGenerateTries in all, after 0.1 s and 0.4 s) when it got no reply at all:
// a connection refused or cut before a whole reply. Each try has a rid of its
// own, so that a server which did take the earlier one does not refuse it as
// a duplicate. A reply with an HTTP error, or no reply within the timeout,
// is not tried again. The reply body, or the last failure (NoReply naming
// the tries).
inline constexpr int kGenerateTries = 3;
std::string generate_with_retries(const std::string& url, nlohmann::json body, double connect_s, double read_s);

// Has every server not in `lost` load the checkpoint in `dir` as
// `version`, all at once, through `route` (ServerDialect::weight_load_route:
// SGLang's /update_weights_from_disk, its KV cache flushed with it, each
// answering when it holds the weights, after the requests it runs finish).
// Returns the servers that did not answer at all, with why; throws on a
// server that answered otherwise than with success.
std::vector<std::pair<std::size_t, std::string>> update_servers(const std::vector<std::string>& urls, const std::vector<bool>& lost,
                                                                const std::string& route, const std::string& dir, std::int64_t version,
                                                                double connect_s, double read_s);

// A reply body is read into memory up to this many bytes (a /generate of
// 32k tokens with their log-probs is about 2 MB); past it the call fails.
inline constexpr std::size_t kMaxReplyBytes = std::size_t{64} << 20;

// Why a reply that no model could have generated is refused: a token id
// outside [0, vocab), or a log-prob that is above 0 or not a number; nullopt
// when it is sound.
std::optional<std::string> reply_fault(const http::GenerateReply& reply, std::int64_t vocab);

}  // namespace april::live
