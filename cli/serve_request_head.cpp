#include "cli/serve_request_head.hpp"

#include <cctype>
#include <charconv>

namespace april::cli {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool icontains(std::string_view s, std::string_view word) {
  for (std::size_t i = 0; i + word.size() <= s.size(); ++i) {
    if (iequals(s.substr(i, word.size()), word)) return true;
  }
  return false;
}

}  // namespace

bool request_ready(std::string_view sent) {
  // httplib skips no blank lines before a request line: neither does this.
  const auto end = sent.find("\r\n\r\n");
  if (end == std::string_view::npos) return sent.size() >= kMaxBufferedHeadBytes;
  const auto head = sent.substr(0, end + 2);
  const auto body_sent = sent.size() - (end + 4);
  std::size_t length = 0;
  std::size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const auto next = head.find("\r\n", pos + 2);
    const auto line = head.substr(pos + 2, next - (pos + 2));
    pos = next;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return true;  // malformed: the handler refuses it
    const auto name = trim(line.substr(0, colon));
    const auto value = trim(line.substr(colon + 1));
    if (iequals(name, "Transfer-Encoding")) return true;
    if (iequals(name, "Expect") && icontains(value, "100-continue")) return true;
    if (iequals(name, "Content-Length")) {
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (ec != std::errc() || p != value.data() + value.size()) return true;  // the handler refuses it
    }
  }
  return length > kMaxBufferedBodyBytes || body_sent >= length;
}

}  // namespace april::cli
