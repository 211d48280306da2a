#include "adapters/live/http_backend.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <optional>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <utility>

#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/http_calls.hpp"
#include "base/hash.hpp"
#include "base/json_value.hpp"

namespace april::live {
namespace {

// What one /generate came back with: the reply, or why there is none.
struct Answer {
  http::GenerateReply reply;
  std::string error;         // "" when the reply was read
  bool server_lost = false;  // no reply at all, or none in time: the server, not the request
};


// One /generate, tried again (at most kGenerateTries in all, after 0.1 s and
// 0.4 s) when it got no reply at all: a connection refused or cut before a
// whole reply. Each try has a rid of its own, so that a server which did
// take the earlier one does not refuse it as a duplicate. A reply with an
// HTTP error, or no reply within the timeout, is not tried again.
constexpr int kGenerateTries = 3;
std::string generate_with_retries(const std::string& url, nlohmann::json body, double connect_s, double read_s) {
  const auto rid = body["rid"].get<std::string>();
  for (int attempt = 1;; ++attempt) {
    try {
      return post_or_throw(url, "/generate", body.dump(), connect_s, read_s);
    } catch (const NoReply& e) {
      if (attempt == kGenerateTries) throw NoReply(fmt::format("{} ({} tries)", e.what(), kGenerateTries));
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * (attempt - 1))));
      body["rid"] = fmt::format("{}-retry{}", rid, attempt);
    }
  }
}

// Has every server not in `lost` load the checkpoint in `dir` as
// `version`, all at once (each answers when it holds the weights: an SGLang
// server first lets the requests it runs finish). Returns the servers that
// did not answer at all, with why; throws on a server that answered
// otherwise than with success.
std::vector<std::pair<std::size_t, std::string>> update_servers(const std::vector<std::string>& urls, const std::vector<bool>& lost,
                                                                const std::string& dir, std::int64_t version, double connect_s,
                                                                double read_s) {
  const nlohmann::json body = {{"model_path", dir}, {"weight_version", std::to_string(version)}, {"flush_cache", true}};
  std::vector<std::pair<std::size_t, std::future<std::string>>> posts;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    if (lost[i]) continue;
    posts.emplace_back(i, std::async(std::launch::async, [url = urls[i], text = body.dump(), connect_s, read_s] {
                         return post_or_throw(url, "/update_weights_from_disk", text, connect_s, read_s);
                       }));
  }
  std::vector<std::pair<std::size_t, std::string>> silent;
  std::string error;
  for (auto& [i, post] : posts) {
    try {
      const auto reply = post.get();
      nlohmann::json doc;
      if (base::parse_json(reply, doc) || !doc.is_object() || !doc.contains("success") || !doc["success"].is_boolean() ||
          !doc["success"].get<bool>()) {
        throw std::runtime_error(fmt::format("{}/update_weights_from_disk: {}", urls[i], http::error_message_of(reply)));
      }
    } catch (const NoReply& e) {
      silent.emplace_back(i, e.what());
    } catch (const TimedOut& e) {
      silent.emplace_back(i, e.what());
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();  // every post collected first
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
  return silent;
}

}  // namespace

struct HttpBackend::Impl {
  struct Stored {
    std::string prompt_id;
    std::vector<std::int32_t> tokens;
    std::vector<float> logprobs;
  };
  struct Flight {
    std::size_t server = 0;
    nlohmann::json body;  // what was sent: sent again as it is when its server is lost
    std::future<Answer> answer;
    std::int64_t version = 0;        // the weights the servers held when it was sent
    std::int32_t max_new_tok = 0;    // what the loop asked for, in all
    base::TokensByVersion earlier;   // tokens of this submission before a sync interrupted it, by version
    bool parked = false;             // interrupted by a recompute sync: sent again when it ends
    bool queued = false;             // held by april until a server has a free slot (Impl::waiting)
  };
  enum class SyncPhase { kNone, kAborting, kUpdating };

  HttpBackendOptions opt;
  const LiveTask& task;
  std::vector<std::int64_t> slots;        // per server, from /get_server_info
  std::vector<std::int64_t> outstanding;  // per server
  std::vector<bool> lost;                 // per server: dropped by failover
  std::vector<rl::EngineRunningChange> changes;  // with record_changes
  std::map<rl::SampleKey, Stored> store;
  std::map<rl::SampleKey, Flight> flights;
  // Flights held until a server has a slot free, in submission order: a
  // server admits what it is sent in the order it arrives, and requests sent
  // at once on many connections arrive in any order, so april sends no more
  // than a server runs (slime's per-server concurrency limit) and the
  // servers admit in the order the policy submitted (its groups together).
  std::deque<rl::SampleKey> waiting;
  std::int64_t submissions = 0, answered = 0, aborted = 0;
  std::optional<std::filesystem::path> last_weights;  // the folder the servers loaded last
  // Overlapped runs (DESIGN.md 3b over HTTP): the weights the servers hold,
  // the train step on its own thread (or, rollout only, its report at once),
  // the sync under way, and what the loop submitted meanwhile.
  std::int64_t version = 0;
  std::future<rl::TrainReport> train_running;
  std::optional<rl::TrainReport> train_report_now;
  SyncPhase sync = SyncPhase::kNone;
  std::int64_t sync_version = 0;
  std::future<std::vector<std::pair<std::size_t, std::string>>> sync_update;  // servers that did not answer, and why
  bool sync_ends_now = false;  // rollout only: a sync changes the version alone
  std::vector<std::pair<rl::SampleKey, std::int32_t>> held;  // (key, max_new_tok) submitted during a sync
  std::string sync_dir;  // the weights the sync under way loads
  std::chrono::steady_clock::time_point last_abort_post;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  // The request threads signal here when they end.
  std::mutex mu;
  std::condition_variable cv;

  Impl(HttpBackendOptions o, const LiveTask& t) : opt(std::move(o)), task(t) {
    if (opt.urls.empty()) throw std::invalid_argument("no server: give at least one URL");
    for (const auto& url : opt.urls) {
      const auto body = get_or_throw(url, "/get_server_info", opt.connect_timeout_s, opt.connect_timeout_s * 2);
      std::int64_t n = 0;
      nlohmann::json doc;
      if (!base::parse_json(body, doc) && doc.is_object() && doc.contains("max_running_requests") &&
          doc["max_running_requests"].is_number_integer()) {
        n = doc["max_running_requests"].get<std::int64_t>();
      }
      slots.push_back(std::max<std::int64_t>(0, n));
    }
    outstanding.assign(opt.urls.size(), 0);
    lost.assign(opt.urls.size(), false);
  }

  // Every open request answered (a destructor or an error path may leave some).
  void settle() {
    for (auto& [key, f] : flights) {
      if (f.answer.valid()) f.answer.wait();
    }
  }

  // Whether server i still answers and has a slot free (a server that did
  // not say how many it runs takes any number).
  [[nodiscard]] bool has_room(std::size_t i) const { return !lost[i] && (slots[i] == 0 || outstanding[i] < slots[i]); }

  // The server with room and the fewest requests outstanding (the first of
  // equals); outstanding.size() when none has room.
  [[nodiscard]] std::size_t least_outstanding() const {
    std::size_t best = outstanding.size();
    for (std::size_t i = 0; i < outstanding.size(); ++i) {
      if (has_room(i) && (best == outstanding.size() || outstanding[i] < outstanding[best])) best = i;
    }
    return best;
  }

  // Held flights sent while servers have room, oldest first; none during a
  // sync (they go with the new weights).
  void pump() {
    while (sync == SyncPhase::kNone && !waiting.empty() && least_outstanding() < outstanding.size()) {
      const auto key = waiting.front();
      waiting.pop_front();
      const auto it = flights.find(key);
      if (it == flights.end() || !it->second.queued) continue;
      it->second.queued = false;
      send(key, it->second);
    }
  }

  // The server's outstanding requests now, recorded (record_changes).
  void note(std::size_t server) {
    if (!opt.record_changes) return;
    rl::EngineRunningChange c;
    c.time_ns = std::llround(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9);
    c.engine = static_cast<std::int64_t>(server);
    c.running = outstanding[server];
    changes.push_back(c);
  }

  [[nodiscard]] std::int64_t servers_left() const { return static_cast<std::int64_t>(std::count(lost.begin(), lost.end(), false)); }

  // The /generate body of sample `key`: slime's resume, the prompt and the
  // tokens so far, `max_new_tok` more at most.
  nlohmann::json body_of(rl::SampleKey key, std::int32_t max_new_tok) const {
    const auto& st = store.at(key);
    auto ids = task.prompt_tokens(st.prompt_id);
    ids.insert(ids.end(), st.tokens.begin(), st.tokens.end());
    const auto held_tok = static_cast<std::uint64_t>(st.tokens.size());
    return {{"input_ids", ids},
            {"return_logprob", true},
            {"sampling_params",
             {{"max_new_tokens", max_new_tok},
              {"temperature", opt.temperature},
              {"top_p", opt.top_p},
              {"stop_token_ids", task.end_tokens()},
              // The in-process backend's seed for a fresh sample (april serve then draws its
              // tokens); a resumed one draws from a seed of its own, as a server's token
              // index restarts at 0 and the same seed would replay the first draws.
              {"sampling_seed", held_tok == 0 ? base::combine_seeds(opt.seed, key)
                                              : base::combine_seeds(base::combine_seeds(opt.seed, key), held_tok)},
              {"skip_special_tokens", false},
              {"no_stop_trim", true}}}};
  }

  // A flight for sample `key` with `body`: sent now to the least loaded
  // server with room, or held until one has (pump).
  Flight launch(rl::SampleKey key, nlohmann::json body) {
    Flight f{outstanding.size(), std::move(body), {}, version, 0, {}, false, false};
    if (sync == SyncPhase::kNone && waiting.empty() && least_outstanding() < outstanding.size()) {
      send(key, f);
    } else {
      f.queued = true;
      waiting.push_back(key);
    }
    return f;
  }

  // Sends the flight to the least loaded server with room, on a thread of its own.
  void send(rl::SampleKey key, Flight& f) {
    const auto server = least_outstanding();
    if (server == outstanding.size()) throw std::logic_error("http backend: sent with no server free");
    ++outstanding[server];
    note(server);
    f.server = server;
    f.version = version;
    f.body["rid"] = fmt::format("april-{}-{}", key, submissions++);
    const auto url = opt.urls[server];
    const auto connect_s = opt.connect_timeout_s, read_s = opt.request_timeout_s;
    auto* signal = this;
    f.answer = std::async(std::launch::async, [url, body = f.body, connect_s, read_s, signal] {
      Answer a;
      try {
        a.reply = http::parse_generate_reply(generate_with_retries(url, body, connect_s, read_s), url + "/generate reply");
      } catch (const NoReply& e) {
        a.error = e.what();
        a.server_lost = true;
      } catch (const TimedOut& e) {
        a.error = e.what();
        a.server_lost = true;
      } catch (const std::exception& e) {
        a.error = e.what();
      }
      {
        std::lock_guard<std::mutex> lock(signal->mu);
      }
      signal->cv.notify_all();
      return a;
    });
  }

  // With failover, drops `server` (once): it answers no more. Throws `why`
  // when failover is off or no server is left.
  void lose(std::size_t server, const std::string& why) {
    if (!opt.failover) throw std::runtime_error(why);
    if (!lost[server]) {
      lost[server] = true;
      std::int64_t moved = 0;
      for (const auto& [key, f] : flights) moved += f.server == server ? 1 : 0;
      if (servers_left() == 0) {
        throw std::runtime_error(fmt::format("{} (and no server is left to take its requests)", why));
      }
      if (opt.on_lost) opt.on_lost(opt.urls[server], why, moved, servers_left());
    }
  }

  // The flight's answer joined to its sample: its progress for the loop, or
  // none when its server was lost and failover sent it again (in `f`). With
  // `aborting`, such a sample is not sent again: it comes back interrupted
  // with nothing new, holding what it held when sent.
  std::optional<rl::SampleProgress> take(rl::SampleKey key, Flight& f, bool aborting = false) {
    auto p = take_answer(key, f, aborting);
    if (!aborting) pump();  // a slot is free: the oldest held flight goes
    return p;
  }

  std::optional<rl::SampleProgress> take_answer(rl::SampleKey key, Flight& f, bool aborting) {
    if (f.queued) {  // never sent: interrupted with nothing new
      f.queued = false;
      std::erase(waiting, key);
      return progress_of(key, f, 0, false);
    }
    auto a = f.answer.get();
    --outstanding[f.server];
    note(f.server);
    ++answered;
    if (!a.error.empty()) {
      if (!a.server_lost) throw std::runtime_error(a.error);
      lose(f.server, a.error);
      if (aborting) {
        ++aborted;
        return progress_of(key, f, 0, false);
      }
      relaunch(key, f, std::move(f.body));  // from the tokens the sample held when sent
      return std::nullopt;
    }
    auto& st = store.at(key);
    st.tokens.insert(st.tokens.end(), a.reply.output_ids.begin(), a.reply.output_ids.end());
    st.logprobs.insert(st.logprobs.end(), a.reply.output_logprobs.begin(), a.reply.output_logprobs.end());
    const bool finished = a.reply.finish != http::FinishKind::Abort;
    if (!finished) ++aborted;
    return progress_of(key, f, static_cast<std::int32_t>(a.reply.output_ids.size()), finished);
  }

  // The sample's progress in this submission: the tokens before an
  // interruption by version, then `new_tok` under the flight's version.
  static rl::SampleProgress progress_of(rl::SampleKey key, const Flight& f, std::int32_t new_tok, bool finished) {
    rl::SampleProgress p{key, 0, f.earlier};
    for (const auto& vt : f.earlier) p.new_tok += vt.tokens;
    if (new_tok > 0) {
      if (!p.by_version.empty() && p.by_version.back().version == f.version) {
        p.by_version.back().tokens += new_tok;
      } else {
        p.by_version.push_back({f.version, new_tok});
      }
      p.new_tok += new_tok;
    }
    p.finished = finished;
    return p;
  }

  // The trainer's weights written to weights_dir/v<version>, for the servers.
  std::string write_weights(std::int64_t v) {
    namespace fs = std::filesystem;
    const auto dir = fs::absolute(fs::path(opt.weights_dir) / fmt::format("v{}", v));
    fs::remove_all(dir);  // a folder of ours left by an interrupted run
    fs::create_directories(dir);
    opt.trainer->write_weights(dir.string());
    return dir.string();
  }

  // The servers hold the weights in `dir`: the previous version's folder goes.
  void weights_loaded(const std::string& dir) {
    if (last_weights) std::filesystem::remove_all(*last_weights);
    last_weights = dir;
  }

  // The batch as the trainer reads it; its samples leave the store.
  std::vector<TrainSampleData> train_data(const std::vector<rl::TrainSample>& batch) {
    std::vector<TrainSampleData> data;
    for (const auto& s : batch) {
      const auto& st = store.at(s.key);
      TrainSampleData d;
      d.prompt = task.prompt_tokens(st.prompt_id);
      d.response = st.tokens;
      d.rollout_logprobs = st.logprobs;
      if (d.rollout_logprobs.size() != d.response.size()) {
        throw std::runtime_error(fmt::format("sample {}: the servers returned {} log-probs for {} tokens (return_logprob unanswered?)",
                                             s.key, d.rollout_logprobs.size(), d.response.size()));
      }
      for (const auto& [v, n] : s.segments) d.token_version.insert(d.token_version.end(), static_cast<std::size_t>(n), v);
      if (d.token_version.size() != d.response.size()) {
        throw std::logic_error(fmt::format("http backend: sample {} has {} tokens but segments cover {}", s.key, d.response.size(),
                                           d.token_version.size()));
      }
      d.reward = task.response_reward(st.prompt_id, d.response);
      d.group = rl::key_group(s.key);
      data.push_back(std::move(d));
    }
    for (const auto& s : batch) store.erase(s.key);
    return data;
  }

  // Rollout only: the batch scored by the task's reward; its samples leave the store.
  rl::TrainReport scored(const std::vector<rl::TrainSample>& batch) {
    double reward = 0, correct = 0;
    for (const auto& s : batch) {
      const auto& st = store.at(s.key);
      const double r = task.response_reward(st.prompt_id, st.tokens);
      reward += r;
      correct += r >= task.correct_reward() ? 1.0 : 0.0;
    }
    for (const auto& s : batch) store.erase(s.key);
    const auto n = static_cast<double>(std::max<std::size_t>(1, batch.size()));
    return {reward / n, correct / n, std::nullopt, std::nullopt};
  }

  // /abort_request {"abort_all": true} to every server left; one that does
  // not answer is lost (failover) or the error. Returns the first error of a
  // server that answered otherwise.
  std::string post_aborts() {
    last_abort_post = std::chrono::steady_clock::now();
    std::string error;
    for (std::size_t i = 0; i < opt.urls.size(); ++i) {
      if (lost[i]) continue;
      try {
        try {
          (void)post_or_throw(opt.urls[i], "/abort_request", R"({"abort_all": true})", opt.connect_timeout_s, opt.request_timeout_s);
        } catch (const NoReply& e) {
          lose(i, e.what());  // its requests answer as lost
        } catch (const TimedOut& e) {
          lose(i, e.what());
        }
      } catch (const std::exception& e) {
        if (error.empty()) error = e.what();
      }
    }
    return error;
  }

  // The sync's weights written and loaded on a thread of its own.
  void begin_update() {
    sync = SyncPhase::kUpdating;
    const auto dir = write_weights(sync_version);
    sync_update = std::async(std::launch::async, [urls = opt.urls, lost_now = lost, dir, v = sync_version, c = opt.connect_timeout_s,
                                                  r = opt.request_timeout_s] { return update_servers(urls, lost_now, dir, v, c, r); });
    sync_dir = dir;
  }

  // The servers hold the new weights: what the sync stopped or held is
  // sent. Returns the stopped samples that had reached their length cap
  // (nothing left to send): finished.
  std::vector<rl::SampleProgress> end_update() {
    for (const auto& [server, why] : sync_update.get()) lose(server, why);  // rethrows a server's refusal
    weights_loaded(sync_dir);
    version = sync_version;
    sync = SyncPhase::kNone;
    std::vector<rl::SampleProgress> at_cap;
    std::vector<rl::SampleKey> resumed;
    for (auto it = flights.begin(); it != flights.end();) {
      Flight& f = it->second;
      if (!f.parked) {
        ++it;
        continue;
      }
      f.parked = false;
      if (const auto left = f.max_new_tok - earlier_tok(f); left > 0) {
        // From prompt + tokens, ahead of what was held: it was sent first.
        f.body = body_of(it->first, left);
        f.queued = true;
        resumed.push_back(it->first);
        ++it;
      } else {
        at_cap.push_back(progress_of(it->first, f, 0, true));
        it = flights.erase(it);
      }
    }
    waiting.insert(waiting.begin(), resumed.begin(), resumed.end());
    pump();
    for (const auto& [key, max_new] : std::exchange(held, {})) start(key, max_new);
    return at_cap;
  }

  // A new submission of sample `key`, up to `max_new_tok` tokens.
  void start(rl::SampleKey key, std::int32_t max_new_tok) {
    Flight f = launch(key, body_of(key, max_new_tok));
    f.max_new_tok = max_new_tok;
    flights[key] = std::move(f);
  }

  // Sends the flight again with `body` (its loop-level fields kept).
  void relaunch(rl::SampleKey key, Flight& f, nlohmann::json body) {
    auto earlier = std::move(f.earlier);
    const auto max_new = f.max_new_tok;
    f = launch(key, std::move(body));
    f.earlier = std::move(earlier);
    f.max_new_tok = max_new;
  }

  // Tokens of this submission held so far (before an interruption).
  static std::int32_t earlier_tok(const Flight& f) {
    std::int32_t n = 0;
    for (const auto& vt : f.earlier) n += vt.tokens;
    return n;
  }
};

HttpBackend::HttpBackend(HttpBackendOptions options, const LiveTask& task) : impl_(std::make_unique<Impl>(std::move(options), task)) {}

HttpBackend::~HttpBackend() {
  if (!impl_->flights.empty()) {
    for (std::size_t i = 0; i < impl_->opt.urls.size(); ++i) {
      if (impl_->lost[i]) continue;
      try {
        (void)post_or_throw(impl_->opt.urls[i], "/abort_request", R"({"abort_all": true})", impl_->opt.connect_timeout_s,
                            impl_->opt.connect_timeout_s * 2);
      } catch (const std::exception&) {
        // Leaving anyway: the requests end at their servers' own pace.
      }
    }
  }
  impl_->settle();
}

double HttpBackend::now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->t0).count(); }
std::int64_t HttpBackend::engines() const { return static_cast<std::int64_t>(impl_->opt.urls.size()); }
std::int64_t HttpBackend::max_running_per_engine() const {
  return impl_->slots.empty() ? 0 : *std::min_element(impl_->slots.begin(), impl_->slots.end());
}

void HttpBackend::submit(const rl::SampleRequest& r) {
  auto& im = *impl_;
  auto& st = im.store[r.key];
  if (r.generated_tok == 0) {
    st.tokens.clear();
    st.logprobs.clear();
  }
  st.prompt_id = r.prompt_id;
  if (static_cast<std::int32_t>(st.tokens.size()) != r.generated_tok) {
    throw std::logic_error(fmt::format("http backend: sample {} holds {} tokens, the loop says {}", r.key, st.tokens.size(), r.generated_tok));
  }
  if (im.flights.count(r.key) != 0 || std::any_of(im.held.begin(), im.held.end(), [&](const auto& h) { return h.first == r.key; })) {
    throw std::logic_error(fmt::format("http backend: sample {} submitted while in flight", r.key));
  }
  if (im.sync != Impl::SyncPhase::kNone) {
    // The servers are taking new weights: it goes when they hold them.
    im.held.emplace_back(r.key, r.max_new_tok);
    return;
  }
  im.start(r.key, r.max_new_tok);
}

std::vector<rl::SampleProgress> HttpBackend::wait_for_completions() {
  auto& im = *impl_;
  if (im.flights.empty()) throw std::logic_error("wait_for_completions with nothing in flight");
  for (;;) {
    std::vector<rl::SampleProgress> out;
    for (auto it = im.flights.begin(); it != im.flights.end();) {
      if (!it->second.queued && it->second.answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        if (auto p = im.take(it->first, it->second)) {
          out.push_back(std::move(*p));
          it = im.flights.erase(it);
        } else {
          ++it;  // sent again to a server left
        }
      } else {
        ++it;
      }
    }
    if (!out.empty()) return out;  // in key order: the map's
    std::unique_lock<std::mutex> lock(im.mu);
    im.cv.wait_for(lock, std::chrono::milliseconds(50));
  }
}

std::vector<rl::SampleProgress> HttpBackend::abort_all() {
  auto& im = *impl_;
  // Every server is told and every flight collected before an error is
  // thrown: none is left half taken.
  std::string error;
  const auto post_aborts = [&] {
    const auto e = im.post_aborts();
    if (error.empty()) error = e;
  };
  post_aborts();
  // A request still on its way when the abort came (connecting, or queued
  // at the server) runs on: the abort is sent again every 0.2 s until every
  // flight has answered.
  for (;;) {
    bool all = true;
    for (auto& [key, f] : im.flights) {
      if (f.answer.valid() && f.answer.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
        all = false;
        break;
      }
    }
    if (all || !error.empty()) break;
    post_aborts();
  }
  std::vector<rl::SampleProgress> out;
  for (auto& [key, f] : im.flights) {
    try {
      out.push_back(*im.take(key, f, true));
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  im.flights.clear();
  if (!error.empty()) throw std::runtime_error(error);
  return out;
}

rl::TrainReport HttpBackend::train(const std::vector<rl::TrainSample>& batch, std::int64_t version) {
  auto& im = *impl_;
  if (im.opt.trainer == nullptr) return im.scored(batch);
  const auto data = im.train_data(batch);
  return im.opt.trainer->train(data, version);
}

void HttpBackend::start_train(const std::vector<rl::TrainSample>& batch, std::int64_t version) {
  auto& im = *impl_;
  if (im.train_running.valid() || im.train_report_now || im.sync != Impl::SyncPhase::kNone || im.sync_ends_now) {
    throw std::logic_error("http backend: start_train while the trainer is busy");
  }
  if (im.opt.trainer == nullptr) {
    im.train_report_now = im.scored(batch);
    return;
  }
  // The batch's tokens are copied out now: the servers go on while the trainer reads them.
  im.train_running = std::async(std::launch::async, [trainer = im.opt.trainer, data = im.train_data(batch), version] {
    return trainer->train(data, version);
  });
}

void HttpBackend::start_sync(std::int64_t new_version, bool recompute) {
  auto& im = *impl_;
  if (im.train_running.valid() || im.train_report_now || im.sync != Impl::SyncPhase::kNone || im.sync_ends_now) {
    throw std::logic_error("http backend: start_sync while the trainer is busy");
  }
  im.sync_version = new_version;
  if (im.opt.trainer == nullptr) {
    // Rollout only: the servers' weights stay; the version alone changes.
    im.version = new_version;
    im.sync_ends_now = true;
    return;
  }
  if (recompute) {
    // AReaL's interruptible rollout: every request stops, keeping its
    // tokens; once all have answered the servers load the weights, and
    // each is sent again from prompt + tokens (wait_for_events).
    im.sync = Impl::SyncPhase::kAborting;
    if (const auto error = im.post_aborts(); !error.empty()) throw std::runtime_error(error);
  } else {
    // The servers' own update: each lets the requests it runs finish under
    // the old weights, holds new ones, and loads (SGLang's
    // /update_weights_from_disk); april holds what the loop submits meanwhile.
    im.begin_update();
  }
}

rl::BackendEvents HttpBackend::wait_for_events() {
  auto& im = *impl_;
  for (;;) {
    rl::BackendEvents ev;
    for (auto it = im.flights.begin(); it != im.flights.end();) {
      Impl::Flight& f = it->second;
      if (f.parked || f.queued || f.answer.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      auto p = im.take(it->first, f);
      if (!p) {
        ++it;  // its server was lost: sent again
        continue;
      }
      if (p->finished) {
        ev.finished.push_back(std::move(*p));
        it = im.flights.erase(it);
        continue;
      }
      if (im.sync != Impl::SyncPhase::kAborting) {
        throw std::runtime_error(fmt::format("{}: answered request {} as aborted, which april did not abort", im.opt.urls[f.server],
                                             f.body.value("rid", std::string("?"))));
      }
      f.earlier = std::move(p->by_version);
      f.parked = true;
      ++it;
    }
    if (im.train_report_now) {
      ev.train_ended = std::move(im.train_report_now);
      im.train_report_now.reset();
    } else if (im.train_running.valid() && im.train_running.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      ev.train_ended = im.train_running.get();  // rethrows the trainer's error
    }
    if (im.sync_ends_now) {
      im.sync_ends_now = false;
      ev.sync_ended = true;
    }
    if (im.sync == Impl::SyncPhase::kAborting) {
      if (std::all_of(im.flights.begin(), im.flights.end(), [](const auto& kv) { return kv.second.parked || kv.second.queued; })) {
        im.begin_update();
      } else if (std::chrono::steady_clock::now() - im.last_abort_post > std::chrono::milliseconds(200)) {
        // A request still on its way when the abort came (connecting, or
        // queued at the server) runs on: the abort is sent again.
        if (const auto error = im.post_aborts(); !error.empty()) throw std::runtime_error(error);
      }
    }
    if (im.sync == Impl::SyncPhase::kUpdating && im.sync_update.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      for (auto& p : im.end_update()) ev.finished.push_back(std::move(p));
      ev.sync_ended = true;
    }
    if (!ev.finished.empty() || ev.train_ended || ev.sync_ended) return ev;
    if (im.flights.empty() && !im.train_running.valid() && im.sync == Impl::SyncPhase::kNone) {
      throw std::logic_error("wait_for_events with nothing in flight, training or syncing");
    }
    std::unique_lock<std::mutex> lock(im.mu);
    im.cv.wait_for(lock, std::chrono::milliseconds(20));
  }
}

void HttpBackend::sync_weights(std::int64_t new_version) {
  auto& im = *impl_;
  im.version = new_version;
  if (im.opt.trainer == nullptr) return;
  const auto dir = im.write_weights(new_version);
  for (const auto& [server, why] : update_servers(im.opt.urls, im.lost, dir, new_version, im.opt.connect_timeout_s, im.opt.request_timeout_s)) {
    im.lose(server, why);
  }
  im.weights_loaded(dir);
}

rl::BackendCounters HttpBackend::counters() const { return {}; }

std::vector<std::int32_t> HttpBackend::sample_tokens(rl::SampleKey key) const {
  const auto it = impl_->store.find(key);
  return it == impl_->store.end() ? std::vector<std::int32_t>{} : it->second.tokens;
}

std::vector<rl::EngineRunningChange> HttpBackend::take_engine_changes() { return std::exchange(impl_->changes, {}); }

std::int64_t HttpBackend::servers_lost() const {
  return static_cast<std::int64_t>(impl_->lost.size()) - impl_->servers_left();
}
std::int64_t HttpBackend::requests_answered() const { return impl_->answered; }
std::int64_t HttpBackend::requests_aborted() const { return impl_->aborted; }

}  // namespace april::live
