// `april serve` at a stop (SIGINT, SIGTERM): every connection it accepted is
// answered, and one kept alive between requests does not hold it up. The
// load test (tests/cli/serve_load_check.py) once saw a request sent just
// before the stop closed with no reply: cpp-httplib's own loop drops a
// connection unread when it reaches a thread after the listener closed.
// Here that moment is made certain: one handler thread, held, with
// connections queued behind it when the listener closes. The loop that
// replaced httplib's for this must also serve requests a client sent
// together (pipelined) on one connection.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cli/serve_http.hpp"

namespace april::cli {
namespace {

using Clock = std::chrono::steady_clock;

// HttpServer, with the length of its listener's accept queue in view.
class ProbedServer : public HttpServer {
 public:
  using HttpServer::HttpServer;
  // Connections the kernel completed that the accept loop has not taken
  // (Linux: a listener's tcpi_unacked).
  int not_accepted() const {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(svr_sock_.load(), IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return -1;
    return static_cast<int>(info.tcpi_unacked);
  }
};

// A connected client socket with a receive timeout, or -1.
int connect_to(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  timeval timeout{20, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(s);
    return -1;
  }
  return s;
}

void send_all(int s, const std::string& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const auto n = ::send(s, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    sent += static_cast<std::size_t>(n);
  }
}

// What the server sends until it closes (or the 20 s timeout).
std::string read_to_close(int s) {
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(s, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  return got;
}

// One whole reply on a kept-alive connection (its body's length is given).
std::string read_reply(int s) {
  std::string got;
  char buf[4096];
  for (;;) {
    const auto head_end = got.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const auto at = got.find("Content-Length: ");
      if (at != std::string::npos && got.size() >= head_end + 4 + std::stoul(got.substr(at + 16))) return got;
    }
    const auto n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<std::size_t>(n));
  }
}

std::string get(const std::string& path, bool close) {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n";
}

struct Fixture {
  explicit Fixture(std::chrono::seconds io_timeout) : svr(limits(io_timeout)) {
    svr.Get("/hold", [this](const httplib::Request&, httplib::Response& res) {
      held.set_value();
      release.get_future().wait();
      res.set_content("held", "text/plain");
    });
    svr.Get("/ping", [](const httplib::Request&, httplib::Response& res) { res.set_content("pong", "text/plain"); });
    port = svr.bind("127.0.0.1", 0);
    if (port > 0) serving = std::thread([this] { svr.serve("127.0.0.1", port); });
    for (int i = 0; i < 2000 && !svr.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Fixture() {
    svr.stop_serving();
    if (!released) release.set_value();
    if (serving.joinable()) serving.join();
  }
  static HttpLimits limits(std::chrono::seconds io_timeout) {
    HttpLimits l;
    l.first_threads = 1;
    l.max_threads = 1;  // one handler: a second connection waits in the queue
    l.max_body_bytes = 1024;
    l.io_timeout = io_timeout;
    return l;
  }
  void let_go() {
    released = true;
    release.set_value();
  }

  ProbedServer svr;
  int port = -1;
  std::promise<void> held, release;
  bool released = false;
  std::thread serving;
};

TEST(ServeShutdown, ConnectionsQueuedWhenTheListenerClosesAreAnswered) {
  Fixture f(std::chrono::seconds(20));
  ASSERT_GT(f.port, 0);
  ASSERT_TRUE(f.svr.is_running());
  const int holder = connect_to(f.port);
  ASSERT_GE(holder, 0);
  send_all(holder, get("/hold", true));
  ASSERT_EQ(f.held.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  // Three more, sent whole; their connections are accepted and wait for
  // the one thread, which the first holds.
  std::vector<int> queued;
  for (int i = 0; i < 3; ++i) {
    queued.push_back(connect_to(f.port));
    ASSERT_GE(queued.back(), 0);
    send_all(queued.back(), get("/ping", true));
  }
  for (int i = 0; i < 2000 && f.svr.not_accepted() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(f.svr.not_accepted(), 0);
  // One accepted before the stop that sends its request after it.
  const int late_sender = connect_to(f.port);
  ASSERT_GE(late_sender, 0);
  for (int i = 0; i < 2000 && f.svr.not_accepted() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  f.svr.stop_serving();
  EXPECT_LT(connect_to(f.port), 0) << "the listener is closed";
  f.let_go();
  EXPECT_NE(read_to_close(holder).find("\r\n\r\nheld"), std::string::npos);
  for (const int s : queued) {
    const auto reply = read_to_close(s);
    EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << "a connection accepted before the stop was closed unanswered: " << reply;
    EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
    EXPECT_NE(reply.find("\r\n\r\npong"), std::string::npos) << reply;
    ::close(s);
  }
  send_all(late_sender, get("/ping", false));
  const auto late = read_to_close(late_sender);
  EXPECT_EQ(late.rfind("HTTP/1.1 200", 0), 0u) << late;
  EXPECT_NE(late.find("Connection: close"), std::string::npos) << "kept alive past the stop: " << late;
  ::close(late_sender);
  ::close(holder);
  f.serving.join();
}

TEST(ServeShutdown, AKeptAliveConnectionDoesNotHoldTheStop) {
  Fixture f(std::chrono::seconds(30));
  ASSERT_GT(f.port, 0);
  const int client = connect_to(f.port);
  ASSERT_GE(client, 0);
  send_all(client, get("/ping", false));
  const auto first = read_reply(client);
  ASSERT_NE(first.find("\r\n\r\npong"), std::string::npos) << first;
  EXPECT_EQ(first.find("Connection: close"), std::string::npos) << "the first reply keeps the connection: " << first;
  // Idle between requests, as a client's pool keeps it.
  const auto t0 = Clock::now();
  f.svr.stop_serving();
  f.let_go();
  f.serving.join();
  // Closed at the stop, not at the 30 s keep-alive timeout.
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(read_to_close(client), "");
  ::close(client);
}

TEST(ServeShutdown, RequestsSentTogetherOnOneConnectionAreEachAnswered) {
  // Two requests in one write: the second is read from what the first's
  // read left buffered, not waited for on the socket.
  Fixture f(std::chrono::seconds(20));
  ASSERT_GT(f.port, 0);
  const int client = connect_to(f.port);
  ASSERT_GE(client, 0);
  send_all(client, get("/ping", false) + get("/ping", true));
  const auto both = read_to_close(client);
  std::size_t replies = 0;
  for (auto at = both.find("HTTP/1.1 200"); at != std::string::npos; at = both.find("HTTP/1.1 200", at + 1)) ++replies;
  EXPECT_EQ(replies, 2U) << both;
  EXPECT_EQ(both.substr(both.size() - 4), "pong") << both;
  ::close(client);
  f.let_go();
}

TEST(ServeShutdown, AMalformedRequestClosesItsConnectionAfterTheReply) {
  // A request line that is no HTTP leaves no request boundary to read on
  // from: the 400 says Connection: close, and the request sent after it on
  // the same connection is not read as one.
  Fixture f(std::chrono::seconds(20));
  ASSERT_GT(f.port, 0);
  const int client = connect_to(f.port);
  ASSERT_GE(client, 0);
  send_all(client, "NOT HTTP AT ALL\r\n\r\n" + get("/ping", false));
  const auto reply = read_to_close(client);
  EXPECT_NE(reply.find("HTTP/1.1 400"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("pong"), std::string::npos) << reply;
  ::close(client);
  // The server answers the next connection as ever.
  const int next = connect_to(f.port);
  ASSERT_GE(next, 0);
  send_all(next, get("/ping", true));
  EXPECT_NE(read_to_close(next).find("pong"), std::string::npos);
  ::close(next);
  f.let_go();
}

}  // namespace
}  // namespace april::cli
