#include "adapters/live/http_calls.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>

#include "adapters/http/sglang_protocol.hpp"

namespace april::live {
namespace {

// Why a request got no reply, in words: httplib names only the step that
// failed ("Read"), and a read fails both on a timeout and on a closed connection.
std::string no_reply(httplib::Error error, double elapsed_s, double read_s) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (nothing listening there?)";
    case httplib::Error::Read:
      return elapsed_s >= 0.95 * read_s ? fmt::format("no reply within {} s", read_s)
                                        : "the connection closed before a whole reply (the server died or cut it)";
    case httplib::Error::Write:
      return "the connection closed while the request was sent";
    default:
      return httplib::to_string(error);
  }
}

// The failure of a call that got no reply, as its kind.
[[noreturn]] void throw_no_reply(const std::string& url, const std::string& route, httplib::Error error, double elapsed_s, double read_s) {
  const auto why = fmt::format("{}{}: {}", url, route, no_reply(error, elapsed_s, read_s));
  const bool timed_out = error == httplib::Error::Read && elapsed_s >= 0.95 * read_s;
  const bool no_reply_at_all =
      error == httplib::Error::Connection || error == httplib::Error::Write || (error == httplib::Error::Read && !timed_out);
  if (no_reply_at_all) throw NoReply(why);
  if (timed_out) throw TimedOut(why);
  throw std::runtime_error(why);
}

}  // namespace

std::unique_ptr<httplib::Client> http_client(const std::string& url, double connect_s, double read_s) {
  auto c = std::make_unique<httplib::Client>(url);
  if (!c->is_valid()) throw std::invalid_argument(fmt::format("{}: not an http://host:port address", url));
  const auto secs = [](double s) { return std::chrono::microseconds(static_cast<std::int64_t>(s * 1e6)); };
  c->set_connection_timeout(secs(connect_s));
  c->set_read_timeout(secs(read_s));
  c->set_write_timeout(secs(read_s));
  return c;
}

std::string post_or_throw(const std::string& url, const std::string& route, const std::string& body, double connect_s, double read_s) {
  auto c = http_client(url, connect_s, read_s);
  const auto start = std::chrono::steady_clock::now();
  const auto res = c->Post(route, body, "application/json");
  if (!res) throw_no_reply(url, route, res.error(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), read_s);
  if (res->status != 200) {
    throw std::runtime_error(fmt::format("{}{}: HTTP {}: {}", url, route, res->status, http::error_message_of(res->body)));
  }
  return res->body;
}

std::string get_or_throw(const std::string& url, const std::string& route, double connect_s, double read_s) {
  auto c = http_client(url, connect_s, read_s);
  const auto start = std::chrono::steady_clock::now();
  const auto res = c->Get(route);
  if (!res) throw_no_reply(url, route, res.error(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), read_s);
  if (res->status != 200) {
    throw std::runtime_error(fmt::format("{}{}: HTTP {}: {}", url, route, res->status, http::error_message_of(res->body)));
  }
  return res->body;
}

}  // namespace april::live
