#include "cli/serve_connection_stream.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace april::cli {
namespace {

// Whether `events` come on `sock` within `timeout_ms` (EINTR retried).
bool wait_for(socket_t sock, short events, int timeout_ms) {
  pollfd fd{sock, events, 0};
  for (;;) {
    const int n = ::poll(&fd, 1, timeout_ms);
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

void name_of(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) ==
      0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

int ConnectionStream::read_wait_ms() const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(read_deadline_ - std::chrono::steady_clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, timeout_ms_));
}

std::string ConnectionStream::take_buffered() {
  std::string out = carried_.substr(carried_begin_);
  out.append(buffer_.data() + begin_, end_ - begin_);
  carried_.clear();
  carried_begin_ = 0;
  begin_ = end_ = 0;
  return out;
}

bool ConnectionStream::is_readable() const { return has_buffered() || wait_for(sock_, POLLIN, read_wait_ms()); }

bool ConnectionStream::is_writable() const { return wait_for(sock_, POLLOUT, timeout_ms_); }

ssize_t ConnectionStream::read(char* ptr, std::size_t size) {
  if (carried_begin_ < carried_.size()) {
    const std::size_t taken = std::min(size, carried_.size() - carried_begin_);
    std::memcpy(ptr, carried_.data() + carried_begin_, taken);
    carried_begin_ += taken;
    return static_cast<ssize_t>(taken);
  }
  if (begin_ >= end_) {
    if (!wait_for(sock_, POLLIN, read_wait_ms())) return -1;
    ssize_t n;
    do {
      n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    begin_ = 0;
    end_ = static_cast<std::size_t>(n);
  }
  const std::size_t taken = std::min(size, end_ - begin_);
  std::memcpy(ptr, buffer_.data() + begin_, taken);
  begin_ += taken;
  return static_cast<ssize_t>(taken);
}

ssize_t ConnectionStream::write(const char* ptr, std::size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do {
    // MSG_NOSIGNAL: a client gone mid-reply is an error here, not SIGPIPE.
    n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) name_of(addr, len, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) name_of(addr, len, ip, port);
}

}  // namespace april::cli
