#pragma once
// What a backend measures of itself, for the simulator to be fitted to it
// (studies/calibration): engine iterations by shape, train steps by batch,
// weight syncs and aborts, alone and side by side. A live backend's profiler
// writes it; `april calibrate` reads it. Plain data and its JSON form.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace april::rl {

// One engine iteration: `batch` running requests each gain a token; of them,
// `prefill_requests` were admitted at this boundary with `prefill_tok` context
// tokens in all, the longest `prefill_longest_tok` (a padded batched prefill
// pays for requests x longest).
struct IterationPoint {
  double batch = 0, kv_tok = 0, prefill_requests = 0, prefill_tok = 0, prefill_longest_tok = 0, time_s = 0;
  bool beside_train = false;  // a live overlapped run's: a train step computed on the same machine meanwhile
  [[nodiscard]] double decode_batch() const { return batch - prefill_requests; }
};
// One train step on `samples` samples, `tokens` prompt + response tokens in
// all, the longest sample `longest_tok` (a padded batch pays samples x longest).
struct TrainPoint {
  double samples = 0, tokens = 0, longest_tok = 0, time_s = 0;
};

// What repeats of a point share, as a map key. An iteration's: batch and
// prefill (resident KV aside: repeats of a shape differ only in it); a train
// step's: samples, tokens and longest sample.
using IterationShape = std::tuple<double, double, double, double>;
using TrainShape = std::tuple<double, double, double>;
IterationShape shape_of(const IterationPoint& it);
TrainShape shape_of(const TrainPoint& t);

// The points' times grouped by shape (iterations or train steps).
template <typename Point>
std::map<decltype(shape_of(Point{})), std::vector<double>> times_by_shape(const std::vector<Point>& points) {
  std::map<decltype(shape_of(Point{})), std::vector<double>> out;
  for (const auto& pt : points) out[shape_of(pt)].push_back(pt.time_s);
  return out;
}

// One abort: the engine held `requests` requests (running or queued) and
// took `time_s` to stop and release them all.
struct AbortPoint {
  double requests = 0, time_s = 0;
};

struct Profile {
  std::string device, model;
  std::int64_t slots = 0;
  std::vector<IterationPoint> iterations;
  std::vector<TrainPoint> train;
  std::vector<double> sync_s;
  std::vector<AbortPoint> aborts;  // optional: profiles written before aborts were probed have none
  // Optional likewise: measured with the engine and a trainer working side by
  // side on one host (as an overlapped live run has them): iterations that
  // ran while a train step computed, and train steps that ran while the
  // engine worked.
  std::vector<IterationPoint> iterations_beside_train;
  std::vector<TrainPoint> train_beside_engines;
  // Optional: the same batch's train step timed alone just before each of
  // train_beside_engines (same index), so that the slowdown is a ratio of two
  // steps taken moments apart, with the machine's drift between them small.
  std::vector<TrainPoint> train_alone_paired;
  // Optional: the wall time of an overlapped train step outside its compute.
  // Start: from handing the step to the trainer's idle thread, while the
  // engine computes, to the step's first line; end: from its last line to
  // the waiting caller's return. No time measured inside the step has them.
  // On the 2-core VM, with both sides waiting in 1 ms slices, they are
  // 0.1-0.5 ms; blocked outright, they were the host's 10-70 ms to wake a
  // halted virtual CPU (live::WorkerThread).
  std::vector<double> train_start_latency_s, train_end_latency_s;
  // Whether each side-by-side probe began after another engine and trainer
  // had their turn (as `april validate`'s interleaved policy arms do), rather
  // than with the probe's own engine and trainer warm. Optional: false.
  bool side_by_side_after_other_arm = false;
  // Optional: a profile taken in slices between other work (LiveProfiler::run,
  // as `april validate` interleaves it with the live steps): how many
  // iterations and train steps had been measured when each slice ended, so
  // that each point's slice, and the machine's speed then, can be told.
  struct Slice {
    std::int64_t iterations_end = 0, train_end = 0;
  };
  std::vector<Slice> slices;
};

nlohmann::json profile_to_json(const Profile& p);  // raw points plus medians and spread per configuration
Profile profile_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace april::rl
