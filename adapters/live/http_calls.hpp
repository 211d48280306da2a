#pragma once
// One HTTP call to an inference server, as every april client of one makes
// it (live::HttpBackend, the HTTP profiler): a POST or GET with timeouts,
// its failure named by URL and route, and told apart by kind, since a
// server that does not answer at all is another matter than one that
// answers an error. cpp-httplib (Debian's libcpp-httplib-dev).
#include <memory>
#include <stdexcept>
#include <string>

namespace httplib {
class Client;
}

namespace april::live {

// No reply at all (no connection, or the connection closed before a whole
// reply): the one failure worth another try.
struct NoReply : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// No reply within the timeout: not tried again, but like NoReply a sign
// that the server, not the request, is at fault.
struct TimedOut : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A client of `url` (http://host:port) with these timeouts; throws
// std::invalid_argument for what is no such address.
std::unique_ptr<httplib::Client> http_client(const std::string& url, double connect_s, double read_s);

// A POST's reply body (status 200), or a runtime_error naming the URL and
// the route: NoReply, TimedOut, or the HTTP status with the server's message.
std::string post_or_throw(const std::string& url, const std::string& route, const std::string& body, double connect_s, double read_s);

// A GET's reply body, likewise.
std::string get_or_throw(const std::string& url, const std::string& route, double connect_s, double read_s);

}  // namespace april::live
