#include "adapters/live/http_calls.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <future>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/json_value.hpp"

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

}  // namespace

[[noreturn]] void throw_no_reply(const std::string& url, const std::string& route, httplib::Error error, double elapsed_s, double read_s) {
  const auto why = fmt::format("{}{}: {}", url, route, no_reply(error, elapsed_s, read_s));
  const bool timed_out = error == httplib::Error::Read && elapsed_s >= 0.95 * read_s;
  const bool no_reply_at_all =
      error == httplib::Error::Connection || error == httplib::Error::Write || (error == httplib::Error::Read && !timed_out);
  if (no_reply_at_all) throw NoReply(why);
  if (timed_out) throw TimedOut(why);
  throw std::runtime_error(why);
}

std::unique_ptr<httplib::Client> http_client(const std::string& url, double connect_s, double read_s) {
  auto c = std::make_unique<httplib::Client>(url);
  if (!c->is_valid()) throw std::invalid_argument(fmt::format("{}: not an http://host:port address", url));
  const auto secs = [](double s) { return std::chrono::microseconds(static_cast<std::int64_t>(s * 1e6)); };
  c->set_connection_timeout(secs(connect_s));
  c->set_read_timeout(secs(read_s));
  c->set_write_timeout(secs(read_s));
  return c;
}

namespace {

// One request whose reply body is read into memory up to kMaxReplyBytes (as
// the server sent it, or once unchunked and inflated: a gzip bomb is cut
// as it inflates), or refused naming the server.
std::string call_bounded(const std::string& url, const std::string& method, const std::string& route, const std::string* body,
                         double connect_s, double read_s) {
  auto c = http_client(url, connect_s, read_s);
  httplib::Request req;
  req.method = method;
  req.path = route;
  if (body != nullptr) {
    req.body = *body;
    req.set_header("Content-Type", "application/json");
  }
  std::string reply;
  bool too_big = false, too_slow = false;
  // read_s bounds each read; a body trickled a byte at a time passes every
  // read and never ends. A server writes its JSON reply at once, so from its
  // first byte the whole body must come within read_s too.
  std::optional<std::chrono::steady_clock::time_point> first_byte;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    const auto now = std::chrono::steady_clock::now();
    if (!first_byte) first_byte = now;
    if (std::chrono::duration<double>(now - *first_byte).count() > read_s) {
      too_slow = true;
      return false;
    }
    if (reply.size() + n > kMaxReplyBytes) {
      too_big = true;
      return false;
    }
    reply.append(data, n);
    return true;
  };
  const auto start = std::chrono::steady_clock::now();
  const auto res = c->send(req);
  if (too_big) throw std::runtime_error(fmt::format("{}{}: a reply longer than {} bytes", url, route, kMaxReplyBytes));
  if (too_slow) {
    throw std::runtime_error(
        fmt::format("{}{}: the reply's body did not arrive whole within {:g} s of its first byte (--engine-timeout)", url, route, read_s));
  }
  if (!res)
    throw_no_reply(url, route, res.error(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), read_s);
  if (res->status != 200)
    throw std::runtime_error(fmt::format("{}{}: HTTP {}: {}", url, route, res->status, http::error_message_of(reply)));
  return reply;
}

}  // namespace

std::string post_or_throw(const std::string& url, const std::string& route, const std::string& body, double connect_s, double read_s) {
  return call_bounded(url, "POST", route, &body, connect_s, read_s);
}

std::string get_or_throw(const std::string& url, const std::string& route, double connect_s, double read_s) {
  return call_bounded(url, "GET", route, nullptr, connect_s, read_s);
}

std::string generate_with_retries(const std::string& url, nlohmann::json body, double connect_s, double read_s) {
  const auto rid = body["rid"].get<std::string>();
  for (int attempt = 1;; ++attempt) {
    try {
      return post_or_throw(url, "/generate", body.dump(), connect_s, read_s);
    } catch (const NoReply& e) {
      if (attempt == kGenerateTries) throw NoReply(fmt::format("{} ({} tries)", e.what(), kGenerateTries));
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * (attempt - 1))));
      body["rid"] = fmt::format("{}-retry{}", rid, attempt);
    }
  }
}

std::vector<std::pair<std::size_t, std::string>> update_servers(const std::vector<std::string>& urls, const std::vector<bool>& lost,
                                                                const std::string& route, const std::string& dir, std::int64_t version,
                                                                double connect_s, double read_s) {
  const nlohmann::json body = {{"model_path", dir}, {"weight_version", std::to_string(version)}, {"flush_cache", true}};
  std::vector<std::pair<std::size_t, std::future<std::string>>> posts;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    if (lost[i]) continue;
    posts.emplace_back(i, std::async(std::launch::async, [url = urls[i], route, text = body.dump(), connect_s, read_s] {
                         return post_or_throw(url, route, text, connect_s, read_s);
                       }));
  }
  std::vector<std::pair<std::size_t, std::string>> silent;
  std::string error;
  for (auto& [i, post] : posts) {
    try {
      const auto reply = post.get();
      nlohmann::json doc;
      if (base::parse_json(reply, doc) || !doc.is_object() || !doc.contains("success") || !doc["success"].is_boolean() ||
          !doc["success"].get<bool>()) {
        throw std::runtime_error(fmt::format("{}{}: {}", urls[i], route, http::error_message_of(reply)));
      }
    } catch (const NoReply& e) {
      silent.emplace_back(i, e.what());
    } catch (const TimedOut& e) {
      silent.emplace_back(i, e.what());
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();  // every post collected first
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
  return silent;
}

std::optional<std::string> reply_fault(const http::GenerateReply& reply, std::int64_t vocab) {
  for (std::size_t i = 0; i < reply.output_ids.size(); ++i) {
    const auto id = reply.output_ids[i];
    if (id < 0 || id >= vocab) return fmt::format("output token {} is {}, outside the model's vocabulary of {}", i, id, vocab);
  }
  // A log-prob is at most 0; a float's rounding may leave a hair above.
  constexpr float kAboveZero = 1e-4f;
  for (std::size_t i = 0; i < reply.output_logprobs.size(); ++i) {
    const auto lp = reply.output_logprobs[i];
    if (!(lp <= kAboveZero)) return fmt::format("output token {}'s log-prob is {}, where a log-prob is at most 0", i, lp);
  }
  return std::nullopt;
}

}  // namespace april::live
