#include "rl/backend_profile.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "base/json_value.hpp"
#include "base/stats.hpp"

namespace april::rl {
namespace {

nlohmann::json spread(const std::vector<double>& v) {
  return {
      {"median_s", base::median(v)}, {"p25_s", base::sample_quantile(v, 0.25)}, {"p75_s", base::sample_quantile(v, 0.75)}, {"n", v.size()}};
}

nlohmann::json iteration_json(const IterationPoint& it) {
  return {{"batch", it.batch},
          {"kv_tok", it.kv_tok},
          {"prefill_requests", it.prefill_requests},
          {"prefill_tok", it.prefill_tok},
          {"prefill_longest_tok", it.prefill_longest_tok},
          {"time_s", it.time_s}};
}

// Bounds that only refuse nonsense: counts past 1e15, times past 1e9 s.
constexpr double kMaxCount = 1e15, kMaxSeconds = 1e9;

IterationPoint iteration_from_json(const base::JsonValue& it) {
  IterationPoint pt;
  // An iteration runs at least one request and takes time: an empty or
  // zero-length one would teach the model free work (0 s, infinite tok/s).
  pt.batch = it.at("batch").number(1, kMaxCount);
  pt.kv_tok = it.at("kv_tok").number(0, kMaxCount);
  pt.prefill_requests = it.at("prefill_requests").number(0, kMaxCount);
  pt.prefill_tok = it.at("prefill_tok").number(0, kMaxCount);
  pt.prefill_longest_tok = it.at("prefill_longest_tok").number(0, kMaxCount);
  pt.time_s = it.at("time_s").number(0, kMaxSeconds);
  if (pt.time_s <= 0) it.at("time_s").fail("an iteration takes time > 0");
  if (pt.prefill_requests > pt.batch || pt.prefill_longest_tok * pt.prefill_requests < pt.prefill_tok) {
    it.fail("inconsistent shape (prefill_requests > batch, or prefill_tok > requests x longest)");
  }
  return pt;
}

TrainPoint train_from_json(const base::JsonValue& t) {
  TrainPoint tp{t.at("samples").number(1, kMaxCount), t.at("tokens").number(0, kMaxCount), t.at("longest_tok").number(0, kMaxCount),
                t.at("time_s").number(0, kMaxSeconds)};
  if (tp.time_s <= 0) t.at("time_s").fail("a train step takes time > 0");
  return tp;
}

template <typename Point, typename Read>
std::vector<Point> points_of(const base::JsonValue& array, Read read) {
  std::vector<Point> out;
  for (const auto& e : array.elements()) out.push_back(read(e));
  return out;
}

}  // namespace

IterationShape shape_of(const IterationPoint& it) { return {it.batch, it.prefill_requests, it.prefill_tok, it.prefill_longest_tok}; }
TrainShape shape_of(const TrainPoint& t) { return {t.samples, t.tokens, t.longest_tok}; }

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json j;
  j["device"] = p.device;
  j["model"] = p.model;
  j["slots"] = p.slots;
  j["iterations"] = nlohmann::json::array();
  for (const auto& it : p.iterations) j["iterations"].push_back(iteration_json(it));
  j["iteration_summary"] = nlohmann::json::array();
  for (const auto& [k, v] : times_by_shape(p.iterations)) {
    auto s = spread(v);
    s["batch"] = std::get<0>(k);
    s["prefill_requests"] = std::get<1>(k);
    s["prefill_tok"] = std::get<2>(k);
    s["prefill_longest_tok"] = std::get<3>(k);
    j["iteration_summary"].push_back(s);
  }
  j["train"] = nlohmann::json::array();
  for (const auto& t : p.train) {
    j["train"].push_back({{"samples", t.samples}, {"tokens", t.tokens}, {"longest_tok", t.longest_tok}, {"time_s", t.time_s}});
  }
  j["train_summary"] = nlohmann::json::array();
  for (const auto& [k, v] : times_by_shape(p.train)) {
    auto s = spread(v);
    s["samples"] = std::get<0>(k);
    s["tokens"] = std::get<1>(k);
    s["longest_tok"] = std::get<2>(k);
    j["train_summary"].push_back(s);
  }
  j["sync_s"] = p.sync_s;
  j["sync_summary"] = spread(p.sync_s);
  j["aborts"] = nlohmann::json::array();
  for (const auto& a : p.aborts) j["aborts"].push_back({{"requests", a.requests}, {"time_s", a.time_s}});
  j["iterations_beside_train"] = nlohmann::json::array();
  for (const auto& it : p.iterations_beside_train) j["iterations_beside_train"].push_back(iteration_json(it));
  for (const char* key : {"train_beside_engines", "train_alone_paired"}) {
    const auto& points = std::string(key) == "train_beside_engines" ? p.train_beside_engines : p.train_alone_paired;
    j[key] = nlohmann::json::array();
    for (const auto& t : points) {
      j[key].push_back({{"samples", t.samples}, {"tokens", t.tokens}, {"longest_tok", t.longest_tok}, {"time_s", t.time_s}});
    }
  }
  j["train_start_latency_s"] = p.train_start_latency_s;
  j["train_end_latency_s"] = p.train_end_latency_s;
  j["side_by_side_after_other_arm"] = p.side_by_side_after_other_arm;
  j["slices"] = nlohmann::json::array();
  for (const auto& sl : p.slices) j["slices"].push_back({{"iterations_end", sl.iterations_end}, {"train_end", sl.train_end}});
  return j;
}

Profile profile_from_json(const nlohmann::json& j, const std::string& where) {
  const base::JsonValue root(j, where);
  Profile p;
  p.device = root.at("device").string();
  p.model = root.at("model").string();
  p.slots = root.at("slots").integer(0, std::int64_t{1} << 40);
  p.iterations = points_of<IterationPoint>(root.at("iterations"), iteration_from_json);
  p.train = points_of<TrainPoint>(root.at("train"), train_from_json);
  // Older profiles lack the side-by-side points, the latencies, the slices and the aborts.
  if (const auto v = root.find("iterations_beside_train")) p.iterations_beside_train = points_of<IterationPoint>(*v, iteration_from_json);
  if (const auto v = root.find("train_beside_engines")) p.train_beside_engines = points_of<TrainPoint>(*v, train_from_json);
  if (const auto v = root.find("train_alone_paired")) {
    p.train_alone_paired = points_of<TrainPoint>(*v, train_from_json);
    // Empty: a profile without pairs (older, or nothing measured side by side).
    if (!p.train_alone_paired.empty() && p.train_alone_paired.size() != p.train_beside_engines.size()) {
      v->fail(fmt::format("{} steps against train_beside_engines' {}: they come in pairs", p.train_alone_paired.size(),
                          p.train_beside_engines.size()));
    }
  }
  if (const auto v = root.find("train_start_latency_s")) p.train_start_latency_s = v->numbers(0, kMaxSeconds);
  if (const auto v = root.find("train_end_latency_s")) p.train_end_latency_s = v->numbers(0, kMaxSeconds);
  if (const auto v = root.find("side_by_side_after_other_arm")) p.side_by_side_after_other_arm = v->boolean();
  if (const auto v = root.find("slices")) {
    std::int64_t iterations_before = 0, train_before = 0;
    for (const auto& sl : v->elements()) {
      const Profile::Slice slice{sl.at("iterations_end").integer(0, std::int64_t{1} << 50),
                                 sl.at("train_end").integer(0, std::int64_t{1} << 50)};
      if (slice.iterations_end < iterations_before || slice.train_end < train_before ||
          slice.iterations_end > static_cast<std::int64_t>(p.iterations.size()) ||
          slice.train_end > static_cast<std::int64_t>(p.train.size())) {
        sl.fail(
            fmt::format("iterations_end {} and train_end {} must not decrease and must not pass the {} iterations and {} train "
                        "steps",
                        slice.iterations_end, slice.train_end, p.iterations.size(), p.train.size()));
      }
      iterations_before = slice.iterations_end;
      train_before = slice.train_end;
      p.slices.push_back(slice);
    }
  }
  p.sync_s = root.at("sync_s").numbers(0, kMaxSeconds);
  if (const auto v = root.find("aborts")) {
    for (const auto& a : v->elements()) p.aborts.push_back({a.at("requests").number(1, kMaxCount), a.at("time_s").number(0, kMaxSeconds)});
  }
  // No train step at all is a server's profile (rollout side only), which
  // may hold no weight load either (vLLM's API has none; --no-weight-load).
  if (p.iterations.size() < 8 || (!p.train.empty() && (p.train.size() < 3 || p.sync_s.empty()))) {
    root.fail("too few measurements to fit (need 8 iterations, and no train step or at least 3 with 1 sync)");
  }
  return p;
}

}  // namespace april::rl
