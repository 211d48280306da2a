#pragma once
// The fuzz targets' rule for a parser: a base::ConfigError is a refusal
// (fine, it names what is wrong); any other exception escaping is a bug.
#include <cstdlib>
#include <exception>

#include "base/config.hpp"

namespace april::fuzz {

template <class Read>
void refused_or_read(Read read) {
  try {
    read();
  } catch (const april::base::ConfigError&) {
  } catch (const std::exception&) {
    std::abort();
  }
}

}  // namespace april::fuzz
