#pragma once
// What april serve's route files share: the bound on open requests (each
// holds a handler thread until answered) and the JSON replies.
#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "adapters/http/sglang_protocol.hpp"

namespace april::cli {

inline void reply_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

inline void reply_error(httplib::Response& res, int status, const std::string& message) {
  reply_json(res, status, http::error_json(message));
}

// The bound on open requests (/generate, /v1/completions and /health_generate, which submit
// to the engine): --slots running plus --max-queued-requests waiting. Each
// holds a handler thread until answered; past the bound a request is
// refused 503 at once, so that the threads beyond it stay free for the
// control routes (an abort, /continue_generation) and for the refusals.
class OpenRequests {
 public:
  explicit OpenRequests(std::int64_t max) : max_(max) {}
  // One request's hold on the bound, released when it is answered.
  class Hold {
   public:
    explicit Hold(OpenRequests* bound) : bound_(bound) {}
    ~Hold() {
      if (bound_ != nullptr) bound_->open_.fetch_sub(1);
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    [[nodiscard]] bool held() const { return bound_ != nullptr; }

   private:
    OpenRequests* bound_;
  };
  // A hold, or none (held() false) when `max` requests are open.
  [[nodiscard]] Hold try_open() {
    if (open_.fetch_add(1) >= max_) {
      open_.fetch_sub(1);
      return Hold(nullptr);
    }
    return Hold(this);
  }
  [[nodiscard]] std::int64_t max() const { return max_; }
  // Requests open now (held until their replies are written).
  [[nodiscard]] std::int64_t open() const { return open_.load(); }

 private:
  std::atomic<std::int64_t> open_{0};
  const std::int64_t max_;
};

inline std::string queue_full(std::int64_t max) {
  return fmt::format("the server has {} requests open, its bound (--slots + --max-queued-requests): try again later", max);
}

}  // namespace april::cli
