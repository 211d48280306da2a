#pragma once
// One accepted connection of `april serve` as an httplib::Stream, for
// HttpServer's own loop over a connection's requests (serve_http.hpp says
// why it has its own). It reads through a buffer, as httplib's reads a
// request line a byte at a time, and waits at most `io_timeout` for each
// read or write, and reads nothing past the request's deadline (a body the
// handler reads itself, sent slowly, holds a handler that long at most).
#include <httplib.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

namespace april::cli {

class ConnectionStream final : public httplib::Stream {
 public:
  // `sent`: bytes of the request read already (ParkedConnections).
  ConnectionStream(socket_t sock, std::chrono::seconds io_timeout, std::chrono::steady_clock::time_point read_deadline, std::string sent)
      : sock_(sock), timeout_ms_(static_cast<int>(io_timeout.count() * 1000)), read_deadline_(read_deadline), carried_(std::move(sent)) {}

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  using httplib::Stream::write;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

  // Bytes read from the socket that no request has taken yet (a client
  // that sends its next request before the reply to this one).
  bool has_buffered() const { return carried_begin_ < carried_.size() || begin_ < end_; }
  // Those bytes, taken out of the stream.
  std::string take_buffered();

 private:
  // The wait for the next read: io_timeout, cut short by the deadline.
  int read_wait_ms() const;

  socket_t sock_;
  int timeout_ms_;
  std::chrono::steady_clock::time_point read_deadline_;
  std::string carried_;
  std::size_t carried_begin_ = 0;
  std::array<char, 4096> buffer_{};
  std::size_t begin_ = 0, end_ = 0;
};

}  // namespace april::cli
