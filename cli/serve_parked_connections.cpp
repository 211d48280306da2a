#include "cli/serve_parked_connections.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "adapters/http/sglang_protocol.hpp"
#include "cli/serve_request_head.hpp"

namespace april::cli {
namespace {

// How often the timeouts are looked at: a parked connection is closed at
// most this long after its timeout.
constexpr int kTickMs = 100;

void close_socket(int sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

}  // namespace

ParkedConnections::ParkedConnections(std::chrono::milliseconds idle_timeout, std::chrono::milliseconds request_timeout, Resume resume)
    : idle_timeout_(idle_timeout), request_timeout_(request_timeout), resume_(std::move(resume)) {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0 || ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error(fmt::format("cannot wait on idle connections: {}", std::strerror(errno)));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_[0];
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_[0], &ev);
  thread_ = std::thread([this] { loop(); });
}

ParkedConnections::~ParkedConnections() {
  stop();
  ::close(epoll_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void ParkedConnections::park(int sock, std::size_t served, std::string sent) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || (close_kept_alive_ && served > 0 && sent.empty())) {
    close_socket(sock);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = sock;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, sock, &ev) != 0) {
    close_socket(sock);
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const auto request_deadline = sent.empty() ? std::chrono::steady_clock::time_point::max() : now + request_timeout_;
  parked_[sock] = Entry{now + idle_timeout_, request_deadline, served, std::move(sent)};
}

ParkedConnections::Read ParkedConnections::read_locked(std::map<int, Entry>::iterator it, std::chrono::steady_clock::time_point now) {
  auto& e = it->second;
  std::array<char, 16 * 1024> buf{};
  const std::size_t cap = kMaxBufferedHeadBytes + kMaxBufferedBodyBytes;
  while (e.sent.size() < cap) {
    const auto n = ::recv(it->first, buf.data(), std::min(buf.size(), cap - e.sent.size()), MSG_DONTWAIT);
    if (n > 0) {
      if (e.sent.empty()) e.request_deadline = now + request_timeout_;
      e.sent.append(buf.data(), static_cast<std::size_t>(n));
      e.idle_deadline = now + idle_timeout_;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // Closed, or an error: a request sent whole before it is still
    // answered (a client may close its side once it has sent); one cut
    // short has no one to answer.
    return request_ready(e.sent) ? Read::ready : Read::gone;
  }
  return e.sent.size() >= cap || request_ready(e.sent) ? Read::ready : Read::waiting;
}

void ParkedConnections::expire_locked(std::map<int, Entry>::iterator it) {
  const auto& e = it->second;
  if (!e.sent.empty()) {
    // Best effort, without waiting: a client this slow may not read it.
    const auto body = http::error_json(fmt::format("the request was not sent whole within {} s ({} s at most between two reads)",
                                                   std::chrono::duration_cast<std::chrono::seconds>(request_timeout_).count(),
                                                   std::chrono::duration_cast<std::chrono::seconds>(idle_timeout_).count()));
    const auto reply =
        fmt::format("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    body.size(), body);
    [[maybe_unused]] const auto n = ::send(it->first, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  close_locked(it);
}

void ParkedConnections::close_locked(std::map<int, Entry>::iterator it) {
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, it->first, nullptr);
  close_socket(it->first);
  parked_.erase(it);
}

void ParkedConnections::close_kept_alive() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    close_kept_alive_ = true;
    for (auto it = parked_.begin(); it != parked_.end();) {
      auto next = std::next(it);
      if (it->second.served > 0 && it->second.sent.empty()) close_locked(it);
      it = next;
    }
    if (parked_.empty() && resuming_ == 0) emptied_.notify_all();
  }
  const char byte = 1;
  [[maybe_unused]] const auto n = ::write(wake_[1], &byte, 1);
}

void ParkedConnections::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  emptied_.wait(lock, [this] { return (parked_.empty() && resuming_ == 0) || stopped_; });
}

void ParkedConnections::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    while (!parked_.empty()) close_locked(parked_.begin());
    emptied_.notify_all();
  }
  const char byte = 1;
  [[maybe_unused]] const auto n = ::write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
}

std::size_t ParkedConnections::parked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return parked_.size() + resuming_;
}

void ParkedConnections::loop() {
  std::vector<epoll_event> events(256);
  for (;;) {
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), kTickMs);
    if (n < 0 && errno != EINTR) return;
    struct Ready {
      int sock;
      std::size_t served;
      std::string sent;
    };
    std::vector<Ready> ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      const auto now = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == wake_[0]) {
          char buf[64];
          while (::read(wake_[0], buf, sizeof buf) > 0) {
          }
          continue;
        }
        const auto it = parked_.find(fd);
        if (it == parked_.end()) continue;
        const auto read = read_locked(it, now);
        if (read == Read::gone) close_locked(it);
        if (read != Read::ready) continue;
        ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
        ready.push_back(Ready{fd, it->second.served, std::move(it->second.sent)});
        parked_.erase(it);
        ++resuming_;
      }
      for (auto it = parked_.begin(); it != parked_.end();) {
        auto next = std::next(it);
        if (it->second.idle_deadline <= now || it->second.request_deadline <= now) expire_locked(it);
        it = next;
      }
      if (parked_.empty() && resuming_ == 0) emptied_.notify_all();
    }
    // The request (or the client's close, which the read finds) goes to a handler.
    for (auto& r : ready) resume_(r.sock, r.served, std::move(r.sent));
    if (!ready.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      resuming_ -= ready.size();
      if (parked_.empty() && resuming_ == 0) emptied_.notify_all();
    }
  }
}

}  // namespace april::cli
