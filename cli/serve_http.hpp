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
// Its loop over a connection's requests is its own too, for the shutdown
// (HttpServer::process_and_close_socket says why).
// docs/serve.md, "Under load", says what a client sees.
#include <httplib.h>
#include <pthread.h>

#include <atomic>
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

#include "cli/serve_parked_connections.hpp"

namespace april::cli {

// Threads for httplib's connections, started as connections need them, up
// to `max_threads`, and kept for the next burst; a connection past that
// waits in the queue for one. It outlives one listen, so that listening
// again after an error leaves the requests being served alone, and at a
// shutdown it serves what is queued before its threads join.
class HandlerPool {
 public:
  HandlerPool(std::size_t first_threads, std::size_t max_threads);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  void enqueue(std::function<void()> job);
  // Returns once no job waits and every thread is idle.
  void wait_idle();
  // Runs what is queued, then joins the threads.
  void shutdown();

 private:
  void work();
  // Starts one more thread (mu_ held); false when the system gives none.
  bool start_thread();
  static void* run(void* pool);

  std::mutex mu_;
  std::condition_variable has_job_;
  std::condition_variable went_idle_;
  std::deque<std::function<void()>> jobs_;
  // POSIX threads, for their stack size: a handler's 1 MiB, not the 8 MiB
  // default, so that a thousand connections' threads fit a process whose
  // address space is limited (a container's), beside the model.
  std::vector<pthread_t> threads_;
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
  // A request not sent whole this long after its first byte is answered
  // 408 and its connection closed: a client sending a byte now and then
  // holds no handler thread meanwhile, and no buffer past a bound.
  std::chrono::seconds request_timeout{30};
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
  // From any thread, once or more: the listener closes, and serve returns
  // once every connection accepted has been answered. A connection's
  // request already sent, or being sent, is read and answered (the routes
  // refuse it 503 once the engine is closed) with `Connection: close`; a
  // kept-alive connection waiting for its next request is closed.
  void stop_serving();

 private:
  // httplib's own loop over a connection's requests ends, before the
  // first request is read, once the listener is stopped: a connection
  // accepted but not yet given a thread would be closed unread, and its
  // client see it cut with no reply (the load test's SIGTERM caught one
  // of 20 late requests so). This one reads each accepted connection's
  // first request whatever happens, and ends a kept-alive one between
  // requests on stop_serving.
  bool process_and_close_socket(socket_t sock) override;
  // Serves `sock`'s requests while they come whole without a wait (`sent`
  // holds what was read of the next); one that waits for more of its next
  // request (its first when `served` is 0) is parked without a thread
  // (ParkedConnections), and comes back here once that request is ready.
  bool serve_connection(socket_t sock, std::size_t served, std::string sent);

  HttpLimits limits_;
  std::shared_ptr<HandlerPool> pool_;
  std::unique_ptr<ParkedConnections> parked_;
  std::atomic<bool> closing_{false};
  std::mutex serving_mu_;
  bool stopping_ = false;   // guarded by serving_mu_
  bool listening_ = false;  // in listen_after_bind (guarded by serving_mu_)
};

// Raises this process's soft limit on open files to its hard limit: every
// connection is a descriptor, and the common soft limit of 1024 would stop
// accepting well before the bound on open requests. Returns the limit now.
std::size_t raise_open_file_limit();

}  // namespace april::cli
