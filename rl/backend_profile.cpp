#include "rl/backend_profile.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "base/stats.hpp"

namespace april::rl {
namespace {

nlohmann::json spread(const std::vector<double>& v) {
  return {{"median_s", base::median(v)}, {"p25_s", base::sample_quantile(v, 0.25)}, {"p75_s", base::sample_quantile(v, 0.75)}, {"n", v.size()}};
}

nlohmann::json iteration_json(const IterationPoint& it) {
  return {{"batch", it.batch},
          {"kv_tok", it.kv_tok},
          {"prefill_requests", it.prefill_requests},
          {"prefill_tok", it.prefill_tok},
          {"prefill_longest_tok", it.prefill_longest_tok},
          {"time_s", it.time_s}};
}

IterationPoint iteration_from_json(const nlohmann::json& it, const std::string& where, const std::string& what, std::size_t index) {
  IterationPoint pt;
  pt.batch = it.at("batch").get<double>();
  pt.kv_tok = it.at("kv_tok").get<double>();
  pt.prefill_requests = it.at("prefill_requests").get<double>();
  pt.prefill_tok = it.at("prefill_tok").get<double>();
  pt.prefill_longest_tok = it.at("prefill_longest_tok").get<double>();
  pt.time_s = it.at("time_s").get<double>();
  for (double v : {pt.batch, pt.kv_tok, pt.prefill_requests, pt.prefill_tok, pt.prefill_longest_tok, pt.time_s}) {
    if (!std::isfinite(v) || v < 0) {
      throw std::invalid_argument(fmt::format("{}: {} {}: every field must be a finite number >= 0", where, what, index));
    }
  }
  if (pt.prefill_requests > pt.batch || pt.prefill_longest_tok * pt.prefill_requests < pt.prefill_tok) {
    throw std::invalid_argument(fmt::format("{}: {} {}: inconsistent shape (prefill_requests > batch, or prefill_tok > "
                                            "requests x longest)", where, what, index));
  }
  if (pt.batch < 1 || pt.time_s <= 0) {
    // A zero-length or empty iteration would teach the model free work (0 s, infinite tok/s).
    throw std::invalid_argument(fmt::format("{}: {} {}: an iteration runs at least one request and takes time > 0 "
                                            "(batch {}, time_s {})", where, what, index, pt.batch, pt.time_s));
  }
  return pt;
}

TrainPoint train_from_json(const nlohmann::json& t, const std::string& where, const std::string& what, std::size_t index) {
  const TrainPoint tp{t.at("samples").get<double>(), t.at("tokens").get<double>(), t.at("longest_tok").get<double>(),
                      t.at("time_s").get<double>()};
  if (!(std::isfinite(tp.time_s) && tp.time_s > 0 && tp.samples >= 1 && std::isfinite(tp.tokens) && tp.tokens >= 0 &&
        std::isfinite(tp.longest_tok) && tp.longest_tok >= 0)) {
    throw std::invalid_argument(fmt::format("{}: {} {}: needs samples >= 1, finite tokens >= 0 and time_s > 0", where, what, index));
  }
  return tp;
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
  Profile p;
  try {
    p.device = j.at("device").get<std::string>();
    p.model = j.at("model").get<std::string>();
    p.slots = j.at("slots").get<std::int64_t>();
    for (const auto& it : j.at("iterations")) p.iterations.push_back(iteration_from_json(it, where, "iteration", p.iterations.size()));
    for (const auto& t : j.at("train")) p.train.push_back(train_from_json(t, where, "train step", p.train.size()));
    if (j.contains("iterations_beside_train")) {
      for (const auto& it : j.at("iterations_beside_train")) {
        p.iterations_beside_train.push_back(
            iteration_from_json(it, where, "iterations_beside_train", p.iterations_beside_train.size()));
      }
    }
    if (j.contains("train_beside_engines")) {
      for (const auto& t : j.at("train_beside_engines")) {
        p.train_beside_engines.push_back(train_from_json(t, where, "train_beside_engines", p.train_beside_engines.size()));
      }
    }
    if (j.contains("train_alone_paired")) {
      for (const auto& t : j.at("train_alone_paired")) {
        p.train_alone_paired.push_back(train_from_json(t, where, "train_alone_paired", p.train_alone_paired.size()));
      }
      // Empty: a profile without pairs (older, or nothing measured side by side).
      if (!p.train_alone_paired.empty() && p.train_alone_paired.size() != p.train_beside_engines.size()) {
        throw std::invalid_argument(fmt::format("{}: train_alone_paired has {} steps and train_beside_engines {}: they come in pairs", where,
                                                p.train_alone_paired.size(), p.train_beside_engines.size()));
      }
    }
    for (auto [key, v] : {std::pair{"train_start_latency_s", &p.train_start_latency_s}, std::pair{"train_end_latency_s", &p.train_end_latency_s}}) {
      if (!j.contains(key)) continue;  // older profiles
      *v = j.at(key).get<std::vector<double>>();
      for (std::size_t i = 0; i < v->size(); ++i) {
        if (!(std::isfinite((*v)[i]) && (*v)[i] >= 0)) {
          throw std::invalid_argument(fmt::format("{}: {}[{}]: a latency must be a finite number of seconds >= 0", where, key, i));
        }
      }
    }
    if (j.contains("side_by_side_after_other_arm")) p.side_by_side_after_other_arm = j.at("side_by_side_after_other_arm").get<bool>();
    if (j.contains("slices")) {  // older profiles and single-slice ones may lack it
      std::int64_t iterations_before = 0, train_before = 0;
      for (const auto& sl : j.at("slices")) {
        const Profile::Slice slice{sl.at("iterations_end").get<std::int64_t>(), sl.at("train_end").get<std::int64_t>()};
        if (slice.iterations_end < iterations_before || slice.train_end < train_before ||
            slice.iterations_end > static_cast<std::int64_t>(p.iterations.size()) ||
            slice.train_end > static_cast<std::int64_t>(p.train.size())) {
          throw std::invalid_argument(fmt::format("{}: slices[{}]: iterations_end {} and train_end {} must not decrease and must not pass "
                                                  "the {} iterations and {} train steps",
                                                  where, p.slices.size(), slice.iterations_end, slice.train_end, p.iterations.size(),
                                                  p.train.size()));
        }
        iterations_before = slice.iterations_end;
        train_before = slice.train_end;
        p.slices.push_back(slice);
      }
    }
    p.sync_s = j.at("sync_s").get<std::vector<double>>();
    for (std::size_t i = 0; i < p.sync_s.size(); ++i) {
      if (!(std::isfinite(p.sync_s[i]) && p.sync_s[i] >= 0)) {
        throw std::invalid_argument(fmt::format("{}: sync_s[{}]: a sync time must be a finite number >= 0", where, i));
      }
    }
    if (j.contains("aborts")) {
      for (const auto& a : j.at("aborts")) {
        p.aborts.push_back({a.at("requests").get<double>(), a.at("time_s").get<double>()});
        const auto& ap = p.aborts.back();
        if (!(std::isfinite(ap.requests) && ap.requests >= 1 && std::isfinite(ap.time_s) && ap.time_s >= 0)) {
          throw std::invalid_argument(fmt::format("{}: aborts[{}]: needs requests >= 1 and a finite time_s >= 0", where,
                                                  p.aborts.size() - 1));
        }
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: not a profile written by `april profile`: {}", where, e.what()));
  }
  if (p.iterations.size() < 8 || p.train.size() < 3 || p.sync_s.empty()) {
    throw std::invalid_argument(fmt::format("{}: too few measurements to fit (need 8 iterations, 3 train steps, 1 sync)", where));
  }
  return p;
}

}  // namespace april::rl
