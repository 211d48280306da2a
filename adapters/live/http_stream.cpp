#include "adapters/live/http_stream.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <limits>
#include <thread>

#include "adapters/http/openai_protocol.hpp"
#include "adapters/live/http_calls.hpp"
#include "base/config.hpp"

namespace april::live {
namespace {

constexpr const char* kRoute = "/v1/completions";
// An error body is read this far (its message is all that is kept).
constexpr std::size_t kMaxErrorBody = 64 * 1024;

using Clock = std::chrono::steady_clock;
// Events a stream may carry beyond one per token: a first event without
// tokens, the finish reason's, the usage, keep-alives.
constexpr std::size_t kSpareEvents = 64;

// The request's max_tokens (the body is april's own); none: no bound but the events'.
std::size_t max_tokens_of(const nlohmann::json& body) {
  if (!body.contains("max_tokens") || !body.at("max_tokens").is_number_integer() || body.at("max_tokens").get<std::int64_t>() < 0) {
    return std::numeric_limits<std::size_t>::max() - kSpareEvents;
  }
  return static_cast<std::size_t>(body.at("max_tokens").get<std::int64_t>());
}

// One try: the reply, or throws as completion_stream says.
http::GenerateReply stream_once(const std::string& url, const std::string& body, std::size_t max_tokens, double connect_s, double read_s,
                                StreamCancel& cancel) {
  http::GenerateReply aborted_before;
  aborted_before.finish = http::FinishKind::Abort;
  aborted_before.abort_message = "closed by the client before it was sent";
  auto client = http_client(url, connect_s, read_s);
  if (!cancel.attach(client.get())) return aborted_before;
  struct Detach {
    StreamCancel& c;
    ~Detach() { (void)c.attach(nullptr); }
  } detach{cancel};

  http::CompletionStreamReader reader(url + kRoute + " stream");
  // A stream brings max_tokens tokens at most, in about as many events: a
  // server that sends more, or events without end, is refused rather than
  // read for ever (each read waits read_s at most, the stream as a whole not).
  int status = 0;
  std::string error_body, parse_error;
  auto last_byte = Clock::now();
  httplib::Request req;
  req.method = "POST";
  req.path = kRoute;
  req.set_header("Accept", "text/event-stream");
  req.set_header("Content-Type", "application/json");
  req.body = body;
  // A cancel that came while the connection was being opened is seen at the
  // reply's headers, which vLLM sends at once.
  req.response_handler = [&status, &cancel](const httplib::Response& res) {
    status = res.status;
    return cancel.opened();
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    last_byte = Clock::now();
    if (status != 200) {
      error_body.append(data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
      return true;
    }
    // Fed before the cancel is looked at: the bytes that carry a finish
    // reason, read after the cancel came, keep the sample finished.
    try {
      reader.feed(data, n);
    } catch (const base::ConfigError& e) {
      parse_error = e.what();
      return false;
    }
    if (reader.partial().output_ids.size() > max_tokens || reader.events() > max_tokens + kSpareEvents) {
      parse_error = fmt::format("{}{}: the stream brought {} tokens in {} events for max_tokens {}", url, kRoute,
                                reader.partial().output_ids.size(), reader.events(), max_tokens);
      return false;
    }
    return !cancel.cancelled();
  };
  const auto res = client->send(req);
  if (!parse_error.empty()) throw std::runtime_error(parse_error);
  if (res && status != 200)
    throw std::runtime_error(fmt::format("{}{}: HTTP {}: {}", url, kRoute, status, http::error_message_of(error_body)));
  // A stream that gave its finish reason holds its whole output, whether
  // or not [DONE] and the connection's end followed.
  if (reader.has_finish_reason()) return reader.reply();
  if (cancel.cancelled()) {
    auto partial = reader.partial();
    partial.finish = http::FinishKind::Abort;
    partial.abort_message = "closed by the client";
    return partial;
  }
  if (!res) throw_no_reply(url, kRoute, res.error(), std::chrono::duration<double>(Clock::now() - last_byte).count(), read_s);
  throw std::runtime_error(
      fmt::format("{}{}: the stream ended before its finish reason ({} tokens received)", url, kRoute, reader.partial().output_ids.size()));
}

}  // namespace

void StreamCancel::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  // Open: the connect is over, so stop() takes its lock at once and shuts the
  // socket; the reading thread's read fails at once.
  if (client_ != nullptr && open_) client_->stop();
}

bool StreamCancel::opened() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = true;
  return !cancelled_;
}

bool StreamCancel::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool StreamCancel::attach(httplib::Client* client) {
  std::lock_guard<std::mutex> lock(mu_);
  client_ = client;
  open_ = false;
  return client == nullptr || !cancelled_;
}

http::GenerateReply completion_stream(const std::string& url, nlohmann::json body, double connect_s, double read_s, StreamCancel& cancel) {
  const auto rid = body["request_id"].get<std::string>();
  for (int attempt = 1;; ++attempt) {
    try {
      return stream_once(url, body.dump(), max_tokens_of(body), connect_s, read_s, cancel);
    } catch (const NoReply& e) {
      if (attempt == kGenerateTries) throw NoReply(fmt::format("{} ({} tries)", e.what(), kGenerateTries));
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * (attempt - 1))));
      body["request_id"] = fmt::format("{}-retry{}", rid, attempt);
    }
  }
}

}  // namespace april::live
