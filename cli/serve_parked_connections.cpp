#include "cli/serve_parked_connections.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

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

ParkedConnections::ParkedConnections(std::chrono::milliseconds timeout, Resume resume) : timeout_(timeout), resume_(std::move(resume)) {
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

void ParkedConnections::park(int sock, std::size_t served) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || (close_kept_alive_ && served > 0)) {
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
  parked_[sock] = Entry{std::chrono::steady_clock::now() + timeout_, served};
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
      if (it->second.served > 0) close_locked(it);
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
    std::vector<std::pair<int, std::size_t>> ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
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
        ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
        ready.emplace_back(fd, it->second.served);
        parked_.erase(it);
        ++resuming_;
      }
      const auto now = std::chrono::steady_clock::now();
      for (auto it = parked_.begin(); it != parked_.end();) {
        auto next = std::next(it);
        if (it->second.deadline <= now) close_locked(it);
        it = next;
      }
      if (parked_.empty() && resuming_ == 0) emptied_.notify_all();
    }
    // The request (or the client's close, which the read finds) goes to a handler.
    for (const auto& [sock, served] : ready) resume_(sock, served);
    if (!ready.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      resuming_ -= ready.size();
      if (parked_.empty() && resuming_ == 0) emptied_.notify_all();
    }
  }
}

}  // namespace april::cli
