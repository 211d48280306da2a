#pragma once
// One reading of an integer written as text, for every place a user writes
// one: --set key=value, the integer options (--seed, --steps, --repeats...)
// and, through the same rules, JSON files (base/config.cpp). So 1000, 1e3
// and 1000.0 read alike everywhere, and a value past the 64-bit range is
// refused, quoted as written, instead of wrapping.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace april::base {

// Either the value, or why the text is not one (without the text itself:
// the caller quotes it with the option or key it came from).
using IntegerReading = std::variant<std::int64_t, std::string>;

// Accepts a whole decimal integer in the 64-bit range ("-12", "+7"), or a
// number in decimal or exponent form whose value is a whole number of
// magnitude below 2^53, where a double is exact ("1e3", "2.0").
IntegerReading read_integer(std::string_view text);

// Doubles that hold a whole number read as that integer, under the same
// 2^53 bound (JSON's 1e3 is a double).
bool is_exact_integer(double d);

}  // namespace april::base
