#pragma once
// Every kind of simulator event, numbered in one place. The number is folded
// into the run fingerprint (sim/event_queue.hpp), so a tag keeps its value
// for good: a new kind of event takes the next free number.
#include <cstdint>

namespace april::sim {

enum EventTag : std::uint32_t {
  kTagEngineKick = 1,        // an engine starts its next iteration (sim/engine)
  kTagEngineSegmentEnd = 2,  // an engine's run of iterations ends (sim/engine)
  kTagTrainEnd = 3,          // an overlapped train step ends (adapters/sim)
  kTagSyncEnd = 4,           // an overlapped weight sync ends (adapters/sim)
};

}  // namespace april::sim
