// When april serve's waiting thread hands a connection to a handler: only
// once a handler can read the request without waiting on the client.
#include "cli/serve_request_head.hpp"

#include <gtest/gtest.h>

#include <string>

namespace april::cli {
namespace {

TEST(ServeRequestHead, AHeadIsReadyOnlyOnceWhole) {
  EXPECT_FALSE(request_ready(""));
  EXPECT_FALSE(request_ready("G"));
  EXPECT_FALSE(request_ready("GET /health HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_FALSE(request_ready("GET /health HTTP/1.1\r\nHost: x\r\n\r"));
  EXPECT_TRUE(request_ready("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(request_ready("GET /health HTTP/1.1\r\n\r\n"));
}

TEST(ServeRequestHead, ABodyOfAStatedLengthIsWaitedForUpToTheBound) {
  const std::string head = "POST /generate HTTP/1.1\r\ncontent-length: 5\r\n\r\n";
  EXPECT_FALSE(request_ready(head));
  EXPECT_FALSE(request_ready(head + "abcd"));
  EXPECT_TRUE(request_ready(head + "abcde"));
  // A pipelined next request behind it leaves this one ready.
  EXPECT_TRUE(request_ready(head + "abcdeGET / HTTP/1.1\r\n"));
  // Past the bound the handler reads the body itself, under its deadline.
  const auto big = std::to_string(kMaxBufferedBodyBytes + 1);
  EXPECT_TRUE(request_ready("POST /generate HTTP/1.1\r\nContent-Length: " + big + "\r\n\r\n"));
  const auto at = std::to_string(kMaxBufferedBodyBytes);
  EXPECT_FALSE(request_ready("POST /generate HTTP/1.1\r\nContent-Length:  " + at + " \r\n\r\n"));
}

TEST(ServeRequestHead, WhatOnlyTheHandlerCanReadIsHandedToIt) {
  // A chunked body, a client waiting for 100 Continue, a length that is
  // not a number, a header line with no colon: the handler answers them.
  EXPECT_TRUE(request_ready("POST /g HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  EXPECT_TRUE(request_ready("POST /g HTTP/1.1\r\nContent-Length: 9\r\nExpect: 100-Continue\r\n\r\n"));
  EXPECT_TRUE(request_ready("POST /g HTTP/1.1\r\nContent-Length: 9x\r\n\r\n"));
  EXPECT_TRUE(request_ready("POST /g HTTP/1.1\r\nContent-Length: -1\r\n\r\n"));
  EXPECT_TRUE(request_ready("POST /g HTTP/1.1\r\nbroken\r\n\r\n"));
  // A head that cannot end within the bound: httplib refuses it at once.
  EXPECT_FALSE(request_ready(std::string(kMaxBufferedHeadBytes - 1, 'a')));
  EXPECT_TRUE(request_ready(std::string(kMaxBufferedHeadBytes, 'a')));
}

}  // namespace
}  // namespace april::cli
