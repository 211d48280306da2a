#pragma once
// The wire form of a run, for handing runs between processes (`april sweep`
// and `april tune` under MPI): a RunSpec as rank 0 sends it to a worker, and
// the RunRecord the worker sends back. Both are JSON text. Every double makes
// the round trip bit for bit, so a run stored from the wire equals one stored
// in-process: JSON carries the spec and the record's header (shortest
// round-trip digits; NaN and infinities as strings), and a record's steps
// follow as raw 8-byte values, after a NUL (ranks share one architecture).
#include <cstdint>
#include <string>

#include "base/config.hpp"
#include "rl/step_metrics.hpp"
#include "studies/results_db.hpp"
#include "studies/run_batch.hpp"

namespace april::studies {

// `index` is the sender's own reference for the run; it comes back unchanged.
std::string spec_to_wire(std::int64_t index, const RunSpec& spec);
struct WireSpec {
  std::int64_t index = 0;
  RunSpec spec;
};
// Rebuilds the spec on a Config of `schema` (the same schema as the sender's:
// both ranks run the same april). Throws std::invalid_argument on text that is
// not a spec.
WireSpec spec_from_wire(const std::string& text, const base::ConfigSchema& schema);

std::string record_to_wire(std::int64_t index, const RunRecord& record);
struct WireRecord {
  std::int64_t index = 0;
  RunRecord record;
};
WireRecord record_from_wire(const std::string& text);

}  // namespace april::studies
