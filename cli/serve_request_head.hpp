#pragma once
// Whether the bytes a connection has sent so far hold a request a handler
// thread can read without waiting on the client: april serve reads a
// request's head (and a small body) in its one waiting thread
// (ParkedConnections), so that a client sending slowly holds no handler.
#include <cstddef>
#include <string_view>

namespace april::cli {

// What the waiting thread buffers of one request at most: a head as long
// as httplib reads (an 8 KiB request line, its headers), and a body as
// small as most API calls'. A longer body is read by the handler, under
// the request's deadline.
inline constexpr std::size_t kMaxBufferedHeadBytes = 16 * 1024;
inline constexpr std::size_t kMaxBufferedBodyBytes = 64 * 1024;

// True when `sent` holds a whole head and either its whole body
// (Content-Length), or a body the handler reads itself: chunked, larger
// than kMaxBufferedBodyBytes, or held back for a `100 Continue` that only
// the handler sends. True also for bytes that can never become a request
// head within the bound, which the handler refuses at once.
bool request_ready(std::string_view sent);

}  // namespace april::cli
