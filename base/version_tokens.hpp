#pragma once
// Tokens generated under one weight version: how an engine reports a
// sample's progress across weight syncs (docs/design.md 3b). One type shared by
// the simulator's engines and the RL loop, so progress moves between them
// without a copy on the hot path.
#include <cstdint>

#include "base/inline_vector.hpp"

namespace april::base {

struct VersionTokens {
  std::int64_t version = 0;
  std::int32_t tokens = 0;
  friend bool operator==(const VersionTokens&, const VersionTokens&) = default;
};
// In token order. Nearly every sample spans one or two versions, so two are
// held inline: a sample's progress costs no allocation on the hot path
// (docs/performance.md: the cost per completion stays flat as the cluster grows).
using TokensByVersion = InlineVector<VersionTokens, 2>;

}  // namespace april::base
