#pragma once
// The HTTP side of `april serve` under load and abuse: cpp-httplib's server
// with the bounds that Debian's cpp-httplib 0.11 leaves open.
//
// Debian ships cpp-httplib compiled (libcpp-httplib.so), so its
// CPPHTTPLIB_* defaults (a listen backlog of 5, an unbounded body, an
// unbounded queue of accepted connections before a fixed pool of threads)
// are fixed in the library: a #define before including httplib.h changes
// nothing there. Each is set here at run time instead: the backlog by
// listening again on the bound socket, the body by its own reader, and the
// threads by a pool of our own (HandlerPool) behind httplib's TaskQueue.
// docs/serve.md, "Under load", says what a client sees.
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace april::cli {

// Threads for httplib's connections, started as connections need them, up
// to `max_threads`, and kept for the next burst; a connection past that
// waits in the queue for one. It counts the connections that wait, so that
// a shutdown can answer them before the listener closes (httplib closes a
// queued connection unread once stopped, and a client would see its
// connection reset). It outlives one listen, so that listening again after
// an error leaves the requests being served alone.
class HandlerPool {
 public:
  HandlerPool(std::size_t first_threads, std::size_t max_threads);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  void enqueue(std::function<void()> job);
  // Runs what is queued, then joins the threads.
  void shutdown();
  // Waits until no connection waits for a thread, at most `within`; false
  // if some still wait.
  bool wait_until_taken(std::chrono::milliseconds within);

 private:
  void work();

  std::mutex mu_;
  std::condition_variable has_job_, taken_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t max_threads_ = 0;
  std::size_t idle_ = 0;
  bool shutting_down_ = false;
};

struct HttpLimits {
  std::size_t first_threads = 8;
  std::size_t max_threads = 0;  // handler threads at most
  std::size_t max_body_bytes = 0;
  // A client that sends nothing for this long, within a request or between
  // requests on a kept-alive connection, is dropped; a reply it does not
  // read for this long is cut.
  std::chrono::seconds io_timeout{5};
};

// httplib::Server with april serve's bounds. POST routes come through
// post_with_body, which reads the body itself.
class HttpServer : public httplib::Server {
 public:
  explicit HttpServer(const HttpLimits& limits);
  ~HttpServer() override;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (0: a free port) with an accept queue as long as the
  // kernel allows; the port, or -1.
  int bind(const std::string& host, int port);

  using BodyHandler = std::function<void(const httplib::Request&, const std::string& body, httplib::Response&)>;
  // A POST route. Its body, whole, is handed to `handler`; one past
  // max_body_bytes (as sent, or once decompressed or unchunked) is read to
  // its end and dropped, and the request refused 413; a body that stops
  // short, or stalls past io_timeout, or is not UTF-8, 400.
  void post_with_body(const std::string& pattern, BodyHandler handler);

  // Serves on the bound port until stop_serving(), then waits for the
  // handlers to end. cpp-httplib's accept loop ends on any error of
  // accept() but EMFILE, EINTR and EAGAIN, where accept(2) asks a server
  // on Linux to retry the network errors it passes on: the server would
  // stop, exit 0, as if asked to. Here it listens again on the same port.
  // Throws std::runtime_error when it cannot (for 10 s).
  void serve(const std::string& host, int port);
  // From any thread, once or more: the listener closes (serve returns once
  // the connections being served are answered).
  void stop_serving();
  // For a shutdown, before stop_serving(): waits until every accepted
  // connection is being served, at most `within`.
  bool wait_until_taken(std::chrono::milliseconds within) { return pool_->wait_until_taken(within); }

 private:
  HttpLimits limits_;
  std::shared_ptr<HandlerPool> pool_;
  std::mutex serving_mu_;
  bool stopping_ = false;   // guarded by serving_mu_
  bool listening_ = false;  // in listen_after_bind (guarded by serving_mu_)
};

// Raises this process's soft limit on open files to its hard limit: every
// connection is a descriptor, and the common soft limit of 1024 would stop
// accepting well before the bound on open requests. Returns the limit now.
std::size_t raise_open_file_limit();

}  // namespace april::cli
