#pragma once
// Connections that wait for a request, held without a thread: april serve's
// handler threads serve requests, not silence. A client that connects and
// sends nothing yet, or keeps its connection alive between requests (every
// SDK's connection pool does), or sends its request slowly, is parked here;
// one thread waits on all of them (epoll), reads what they send, and hands
// each back to the handler pool once it has sent a request a handler can
// read without waiting (request_ready), or closed. One silent past the idle
// timeout is closed, and one whose request has not come whole within the
// request timeout is answered 408 and closed. Without this, as many idle
// or slow clients as there are handler threads starved every other
// request, /health included.
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace april::cli {

class ParkedConnections {
 public:
  // `resume(sock, served, sent)`: hands a connection back to a handler,
  // with the number of requests it has been served and the bytes read of
  // its next request.
  using Resume = std::function<void(int sock, std::size_t served, std::string sent)>;
  // `idle_timeout`: silence allowed between two reads; `request_timeout`:
  // the time from a request's first byte until it is ready.
  ParkedConnections(std::chrono::milliseconds idle_timeout, std::chrono::milliseconds request_timeout, Resume resume);
  ~ParkedConnections();  // closes what is still parked
  ParkedConnections(const ParkedConnections&) = delete;
  ParkedConnections& operator=(const ParkedConnections&) = delete;

  // Waits for `sock`'s next request (its first when `served` is 0), of
  // which `sent` has been read already. After stop() it is closed at once.
  void park(int sock, std::size_t served, std::string sent = {});
  // A shutdown: connections kept alive between requests are closed now;
  // those waiting for their first request keep waiting (its client sent
  // it, or is sending it: it is read and answered).
  void close_kept_alive();
  // Returns once nothing is parked or being handed back (every first
  // request read, or timed out).
  void drain();
  // Closes whatever is parked and ends the thread; park() then closes.
  void stop();
  // Parked, or being handed back to a handler.
  [[nodiscard]] std::size_t parked() const;

 private:
  struct Entry {
    std::chrono::steady_clock::time_point idle_deadline;
    std::chrono::steady_clock::time_point request_deadline;  // once a byte of a request came
    std::size_t served = 0;
    std::string sent;
  };
  void loop();
  // Reads what `it`'s client has sent (mu_ held): whether its request is
  // ready for a handler, or its client went before sending one whole.
  enum class Read { waiting, ready, gone };
  Read read_locked(std::map<int, Entry>::iterator it, std::chrono::steady_clock::time_point now);
  void close_locked(std::map<int, Entry>::iterator it);
  // Past a deadline: a request begun is answered 408, then closed.
  void expire_locked(std::map<int, Entry>::iterator it);

  const std::chrono::milliseconds idle_timeout_;
  const std::chrono::milliseconds request_timeout_;
  Resume resume_;
  int epoll_ = -1;
  int wake_[2] = {-1, -1};
  mutable std::mutex mu_;
  std::condition_variable emptied_;
  std::map<int, Entry> parked_;
  std::size_t resuming_ = 0;  // taken off parked_, not yet handed to a handler
  bool close_kept_alive_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace april::cli
