#pragma once
// Every kind of simulator event, numbered in one place. The number is folded
// into the run fingerprint (sim/event_queue.hpp), so a tag keeps its value
// for good: a new kind of event takes the next free number.
#include <cstddef>
#include <cstdint>

namespace april::sim {

enum EventTag : std::uint32_t {
  kTagEngineKick = 1,        // an engine starts its next iteration (sim/engine)
  kTagEngineSegmentEnd = 2,  // an engine's run of iterations ends (sim/engine)
  kTagTrainEnd = 3,          // an overlapped train step ends (adapters/sim)
  kTagSyncEnd = 4,           // an overlapped weight sync, or a publish to relays, ends (adapters/sim)
  kTagPullEnd = 5,           // an engine's pull from its relay ends (adapters/sim)
  kTagLendEnd = 6,           // the trainer's GPUs, lent to rollout, serve as hybrid engines (adapters/sim)
  kTagReclaimEnd = 7,        // the trainer has its lent GPUs back (adapters/sim)
};

// An engine's event carries the engine's index above the kind, so that the
// fingerprint tells which engine ran what (engine 0's tags are the kind's).
constexpr std::uint32_t engine_event_tag(EventTag kind, std::size_t engine) {
  return static_cast<std::uint32_t>(kind) | (static_cast<std::uint32_t>(engine) << 8);
}

}  // namespace april::sim
