// A cancel (vLLM's abort: close the stream) must not wait on a connection
// still being opened. A server whose accept queue is full drops the SYN, and
// the client's connect then hangs until its timeout; a cancel that waited for
// it would hold up the abort of every other stream behind it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "adapters/live/http_stream.hpp"

namespace april::live {
namespace {

using Clock = std::chrono::steady_clock;

// A listener on loopback whose accept queue one connection fills: later
// connects hang (Linux drops their SYN).
struct FullListener {
  int listener = -1, filler = -1;
  int port = 0;
  FullListener() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listener, 0) != 0) return;
    socklen_t len = sizeof a;
    getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    filler = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(filler, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) port = 0;
  }
  ~FullListener() {
    if (filler >= 0) close(filler);
    if (listener >= 0) close(listener);
  }
};

TEST(StreamCancel, ACancelDoesNotWaitForAConnectThatHangs) {
  FullListener server;
  ASSERT_NE(server.port, 0);
  StreamCancel cancel;
  http::GenerateReply reply;
  bool threw = false;
  const nlohmann::json body = {{"request_id", "hang"}, {"prompt", {1, 2, 3}}, {"stream", true}};
  std::thread reader([&] {
    try {
      reply = completion_stream("http://127.0.0.1:" + std::to_string(server.port), body, 1.5, 1.5, cancel);
    } catch (const std::exception&) {
      threw = true;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the reader is in its connect
  const auto t0 = Clock::now();
  cancel.cancel();
  cancel.cancel();  // repeated, as the abort loop does
  const double cancel_s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_TRUE(cancel.cancelled());
  reader.join();
  EXPECT_LT(cancel_s, 0.5) << "cancel waited for the connect";
  // The connect timed out after the cancel: an abort, not a failure, and no retry.
  EXPECT_FALSE(threw);
  EXPECT_EQ(reply.finish, http::FinishKind::Abort);
  EXPECT_TRUE(reply.output_ids.empty());
}

}  // namespace
}  // namespace april::live
