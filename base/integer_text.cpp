#include "base/integer_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace april::base {

bool is_exact_integer(double d) { return std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0; }

IntegerReading read_integer(std::string_view text) {
  const std::string s(text);
  if (s.empty()) return std::string("an empty value is not an integer");
  // strtoll/strtod would skip leading blanks and read hexadecimal ("0x10").
  if (std::isspace(static_cast<unsigned char>(s.front())) != 0 || s.find_first_of("xX") != std::string::npos) {
    return std::string("not an integer");
  }
  // Whole integers exactly: a double would round those above 2^53.
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() + s.size()) {
    if (errno == ERANGE) return std::string("out of the 64-bit integer range");
    return static_cast<std::int64_t>(v);
  }
  errno = 0;
  end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d)) return std::string("not an integer");
  if (errno == ERANGE || std::fabs(d) >= 9.2e18) return std::string("out of the 64-bit integer range");
  if (d != std::floor(d)) return std::string("not a whole number");
  if (!is_exact_integer(d)) return std::string("beyond 2^53 in exponent form, where it may be rounded; write it in digits");
  return static_cast<std::int64_t>(d);
}

}  // namespace april::base
