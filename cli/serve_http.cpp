#include "cli/serve_http.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "adapters/http/sglang_protocol.hpp"
#include "cli/serve_connection_stream.hpp"
#include "cli/serve_request_head.hpp"
#include "hf/utf8.hpp"

namespace april::cli {
namespace {

// httplib asks new_task_queue for a queue once per listen and shuts it
// down, then deletes it, when the listen ends; the pool itself stays with
// the server, which shuts it down when it stops serving (HttpServer::serve).
class PoolQueue : public httplib::TaskQueue {
 public:
  explicit PoolQueue(std::shared_ptr<HandlerPool> pool) : pool_(std::move(pool)) {}
  void enqueue(std::function<void()> fn) override { pool_->enqueue(std::move(fn)); }
  void shutdown() override {}

 private:
  std::shared_ptr<HandlerPool> pool_;
};

// Set by the error handler on the thread that answers a request it could not
// read, so that the connection's loop closes it after the reply.
thread_local bool t_close_after_reply = false;

// The accept queue asked for; the kernel caps it at net.core.somaxconn
// (4096 by default since Linux 5.4).
constexpr int kListenBacklog = 4096;

void reply_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(http::error_json(message), "application/json");
}

}  // namespace

// A handler's stack: parsing and answering a request nests shallowly (the
// JSON parser keeps its own stack on the heap).
constexpr std::size_t kHandlerStackBytes = std::size_t{1} << 20;

HandlerPool::HandlerPool(std::size_t first_threads, std::size_t max_threads) : max_threads_(std::max<std::size_t>(1, max_threads)) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto first = std::clamp<std::size_t>(first_threads, 1, max_threads_);
  for (std::size_t i = 0; i < first; ++i) {
    if (!start_thread()) throw std::runtime_error("cannot start the HTTP handler threads");
  }
}

void* HandlerPool::run(void* pool) {
  static_cast<HandlerPool*>(pool)->work();
  return nullptr;
}

bool HandlerPool::start_thread() {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t t{};
  const bool ok = pthread_attr_setstacksize(&attr, kHandlerStackBytes) == 0 && pthread_create(&t, &attr, &HandlerPool::run, this) == 0;
  pthread_attr_destroy(&attr);
  if (ok) threads_.push_back(t);
  return ok;
}

HandlerPool::~HandlerPool() { shutdown(); }

void HandlerPool::enqueue(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
    // More connections wait than threads are idle: one more thread, up to the bound.
    if (!shutting_down_ && jobs_.size() > idle_ && threads_.size() < max_threads_) {
      // No thread to be had (a limit of the system: threads, memory, address
      // space): the connection waits for one of those there are.
      (void)start_thread();
    }
  }
  has_job_.notify_one();
}

void HandlerPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++idle_;
      if (jobs_.empty() && idle_ == threads_.size()) went_idle_.notify_all();
      has_job_.wait(lock, [this] { return shutting_down_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // shutting down, and nothing left to serve
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void HandlerPool::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  went_idle_.wait(lock, [this] { return shutting_down_ || (jobs_.empty() && idle_ == threads_.size()); });
}

void HandlerPool::shutdown() {
  std::vector<pthread_t> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    threads.swap(threads_);
  }
  has_job_.notify_all();
  for (auto& t : threads) pthread_join(t, nullptr);
}

HttpServer::HttpServer(const HttpLimits& limits)
    : limits_(limits), pool_(std::make_shared<HandlerPool>(limits.first_threads, limits.max_threads)) {
  parked_ = std::make_unique<ParkedConnections>(
      std::chrono::duration_cast<std::chrono::milliseconds>(limits.io_timeout),
      std::chrono::duration_cast<std::chrono::milliseconds>(limits.request_timeout),
      [this](int sock, std::size_t served, std::string sent) {
        pool_->enqueue([this, sock, served, sent = std::move(sent)]() mutable { (void)serve_connection(sock, served, std::move(sent)); });
      });
  new_task_queue = [pool = pool_] { return new PoolQueue(pool); };
  const auto secs = static_cast<time_t>(limits.io_timeout.count());
  set_read_timeout(secs, 0);
  set_write_timeout(secs, 0);
  set_keep_alive_timeout(secs);
  // A Content-Length past the bound: httplib reads the body to its end,
  // drops it, and answers 413 (post_with_body says why).
  set_payload_max_length(limits.max_body_bytes);
  // httplib's own refusals (a malformed request line or headers, no such
  // route, a request line past 8 KiB) carry no body: SGLang's error body,
  // as every other refusal here.
  set_error_handler(HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return HandlerResponse::Unhandled;
    std::string what;
    switch (res.status) {
      case 404:
        what = "no such route";
        break;
      case 414:
        what = "the request line is longer than 8 KiB";
        break;
      case 400:
        what = "a malformed HTTP request, or one not sent whole within the timeout";
        break;
      default:
        what = fmt::format("HTTP {}", res.status);
        break;
    }
    res.set_content(http::error_json(req.method.empty() ? what : fmt::format("{} {}: {}", req.method, req.path, what)), "application/json");
    // A request that could not be read leaves the connection at no known
    // request boundary: what follows is not read as requests.
    if (res.status == 400 || res.status == 414) {
      res.set_header("Connection", "close");
      t_close_after_reply = true;
    }
    return HandlerResponse::Handled;
  }));
}

HttpServer::~HttpServer() { parked_->stop(); }

int HttpServer::bind(const std::string& host, int port) {
  const int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  if (bound < 0) return -1;
  // httplib listened with its compiled backlog of 5: a thousand clients
  // connecting at once overflow it, and the kernel drops their handshakes,
  // which clients retry after 1, 3, 7, ... s (seen: 18% to 84% of a burst
  // of 1,000 unanswered after 60 s). On Linux, listen() on a listening
  // socket sets its backlog anew.
  if (::listen(svr_sock_.load(), kListenBacklog) != 0) {
    std::fputs("april serve: warning: cannot lengthen the accept queue; a burst of connections may wait seconds\n", stderr);
  }
  return bound;
}

void HttpServer::serve(const std::string& host, int port) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(serving_mu_);
      if (stopping_) break;
      listening_ = true;
    }
    listen_after_bind();
    const int err = errno;
    std::unique_lock<std::mutex> lock(serving_mu_);
    listening_ = false;
    if (stopping_) break;
    // httplib closed the socket and kept its number, which another file
    // may now have: forgotten before binding again.
    svr_sock_ = INVALID_SOCKET;
    std::fputs(fmt::format("april serve: warning: the listener failed (accept: {}); listening again on port {}\n", std::strerror(err), port)
                   .c_str(),
               stderr);
    for (int tries = 0; !stopping_ && bind(host, port) < 0; ++tries) {
      if (tries == 100) throw std::runtime_error(fmt::format("cannot listen again on {}:{} after the listener failed", host, port));
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      lock.lock();
    }
  }
  // Every connection accepted is served to its end (one waiting for its
  // first request, for the timeout at most), then the threads join. A
  // connection the handlers still hold may park again, and a parked one
  // come back to them: both must be quiet at once.
  for (;;) {
    parked_->drain();
    pool_->wait_idle();
    if (parked_->parked() == 0) break;
  }
  pool_->shutdown();
  parked_->stop();
}

void HttpServer::stop_serving() {
  if (!closing_.exchange(true)) parked_->close_kept_alive();
  {
    std::lock_guard<std::mutex> lock(serving_mu_);
    stopping_ = true;
    if (!listening_) return;  // serve() sees stopping_ before it listens again
  }
  // Just called, listen may not run its loop yet, when stop() would not hold.
  for (int i = 0; i < 2000 && !is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The kernel resets the connections still in the accept queue when the
  // listener closes: the accept loop is given up to 1 s to take them (for
  // a listening socket, Linux's tcpi_unacked is that queue's length).
  for (int i = 0; i < 1000; ++i) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(svr_sock_.load(), IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || info.tcpi_unacked == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop();
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  // A new connection's first request is read by the waiting thread, not here.
  parked_->park(sock, 0);
  return true;
}

bool HttpServer::serve_connection(socket_t sock, std::size_t served, std::string sent) {
  bool ret = true;
  // Each request ready (request_ready, or its client closed) when it comes here.
  for (; served < keep_alive_max_count_; ++served) {
    ConnectionStream strm(sock, limits_.io_timeout, std::chrono::steady_clock::now() + limits_.request_timeout, std::move(sent));
    const bool closing = closing_.load();
    bool connection_closed = false;
    t_close_after_reply = false;
    ret = process_request(strm, closing || served + 1 == keep_alive_max_count_, connection_closed, nullptr);
    if (!ret || connection_closed || closing || t_close_after_reply || served + 1 == keep_alive_max_count_) break;
    // A client may send its next request before this reply: what came of
    // it is carried on. Only a whole one is served on this thread.
    sent = strm.take_buffered();
    if (!request_ready(sent)) {
      parked_->park(sock, served + 1, std::move(sent));
      return ret;
    }
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

void HttpServer::post_with_body(const std::string& pattern, BodyHandler handler) {
  // The body is read here, not by httplib: httplib bounds only a
  // Content-Length, so a chunked or a compressed body would grow without
  // limit in memory.
  Post(pattern, [this, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res,
                                                     const httplib::ContentReader& reader) {
    const auto max = limits_.max_body_bytes;
    const auto where = fmt::format("{} {}", req.method, req.path);
    if (req.is_multipart_form_data()) {
      // Read to its end and dropped, so that the reply is read by a client
      // still sending rather than the connection reset under it.
      const bool whole = reader([](const httplib::MultipartFormData&) { return true; }, [](const char*, std::size_t) { return true; });
      if (res.status == 413)
        return reply_error(res, 413, fmt::format("{}: the body is larger than {} bytes (--max-body-bytes)", where, max));
      if (!whole) {
        return reply_error(res, 400, fmt::format("{}: the body stopped short or stalled past {} s", where, limits_.io_timeout.count()));
      }
      return reply_error(res, 400, fmt::format("{}: a multipart form is not served; send the JSON body as application/json", where));
    }
    std::string body;
    bool too_big = false;
    const bool whole = reader([&](const char* data, std::size_t n) {
      if (!too_big && body.size() + n <= max) {
        body.append(data, n);
      } else {
        // Past the bound: read on and drop, as httplib does for a
        // Content-Length past it, so that the client reads the 413.
        too_big = true;
        std::string().swap(body);
      }
      return true;
    });
    if (too_big || res.status == 413) {
      return reply_error(res, 413, fmt::format("{}: the body is larger than {} bytes (--max-body-bytes)", where, max));
    }
    if (!whole) {
      return reply_error(
          res, 400,
          fmt::format("{}: the body stopped short of its length, was malformed, or stalled past {} s", where, limits_.io_timeout.count()));
    }
    // Every body here is JSON, which is UTF-8 (RFC 8259): said as such,
    // rather than as the JSON parser's "ill-formed UTF-8 byte" inside a
    // string or a syntax error outside one. The byte counts from 1, as the
    // parser's "not JSON at byte N".
    if (const auto bad = hf::utf8::first_invalid(body)) {
      return reply_error(res, 400,
                         fmt::format("{}: the body is not valid UTF-8 (byte {}, 0x{:02X})", where, *bad + 1,
                                     static_cast<unsigned>(static_cast<unsigned char>(body[*bad]))));
    }
    handler(req, body, res);
  });
}

std::size_t raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    rlimit raised = r;
    raised.rlim_cur = r.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  return r.rlim_cur == RLIM_INFINITY ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(r.rlim_cur);
}

}  // namespace april::cli
