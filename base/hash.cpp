#include "base/hash.hpp"

#include <fmt/format.h>

namespace april::base {

std::uint64_t fnv1a(std::string_view bytes) {
  Fnv1a h;
  h.add(bytes);
  return h.value();
}

std::string hash_hex(std::string_view bytes) { return fmt::format("{:016x}", fnv1a(bytes)); }

std::uint64_t combine_seeds(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  return z ^ (z >> 31);
}

}  // namespace april::base
