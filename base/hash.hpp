#pragma once
// The project's one content hash, FNV-1a (64 bit): run identities, trace
// identities, RNG stream names and the simulator's event fingerprint. Not
// cryptographic; chosen because it is tiny, stable across platforms and
// order-sensitive.
#include <cstdint>
#include <string>
#include <string_view>

namespace april::base {

class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (char c : bytes) add_byte(static_cast<unsigned char>(c));
  }
  // The 8 bytes of v, least significant first (the same on every platform).
  void add_u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) add_byte(static_cast<unsigned char>((v >> (8 * i)) & 0xffU));
  }
  [[nodiscard]] std::uint64_t value() const { return h_; }

 private:
  void add_byte(unsigned char b) {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::uint64_t fnv1a(std::string_view bytes);
// fnv1a as 16 hex digits.
std::string hash_hex(std::string_view bytes);
// Mixes two 64-bit values into a seed (splitmix64's finaliser over a
// boost::hash_combine-style mix): per-request sampling seeds.
std::uint64_t combine_seeds(std::uint64_t a, std::uint64_t b);

}  // namespace april::base
