#pragma once
// Connections that wait for a request, held without a thread: april serve's
// handler threads serve requests, not silence. A client that connects and
// sends nothing yet, or keeps its connection alive between requests (every
// SDK's connection pool does), is parked here; one thread waits on all of
// them (epoll) and hands each back to the handler pool once it has
// something to read (a request, or its close), or closes it past the
// timeout. Without this, as many idle clients as there are handler threads
// starved every other request, /health included.
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace april::cli {

class ParkedConnections {
 public:
  // `resume(sock, served)`: hands a connection with something to read back
  // to a handler, with the number of requests it has been served.
  using Resume = std::function<void(int sock, std::size_t served)>;
  ParkedConnections(std::chrono::milliseconds timeout, Resume resume);
  ~ParkedConnections();  // closes what is still parked
  ParkedConnections(const ParkedConnections&) = delete;
  ParkedConnections& operator=(const ParkedConnections&) = delete;

  // Waits for `sock`'s next request (its first when `served` is 0) for
  // the timeout at most. After stop() it is closed at once.
  void park(int sock, std::size_t served);
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
    std::chrono::steady_clock::time_point deadline;
    std::size_t served = 0;
  };
  void loop();
  void close_locked(std::map<int, Entry>::iterator it);

  const std::chrono::milliseconds timeout_;
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
