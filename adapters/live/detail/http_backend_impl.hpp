#pragma once
// live::HttpBackend's state and its moves, shared by the files that define
// its methods (http_backend.cpp: the colocated turns; http_backend_overlap.cpp:
// training and syncing beside the rollout). Plain C++: no torch.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "adapters/http/sglang_protocol.hpp"
#include "adapters/live/http_backend.hpp"
#include "adapters/live/http_calls.hpp"
#include "adapters/live/http_stream.hpp"
#include "adapters/live/server_dialect.hpp"
#include "base/hash.hpp"
#include "base/json_value.hpp"

namespace april::live {

// What one /generate came back with: the reply, or why there is none.
struct HttpAnswer {
  http::GenerateReply reply;
  std::string error;         // "" when the reply was read
  bool server_lost = false;  // no reply at all, or none in time: the server, not the request
};

struct HttpBackend::Impl {
  struct Stored {
    std::string prompt_id;
    std::vector<std::int32_t> tokens;
    std::vector<float> logprobs;
  };
  // Servers [first, first + count); count 0: every server.
  struct Servers {
    std::int32_t first = 0, count = 0;
  };
  struct Flight {
    std::size_t server = 0;
    nlohmann::json body;  // what was sent: sent again as it is when its server is lost
    std::future<HttpAnswer> answer;
    std::int64_t version = 0;              // the weights the servers held when it was sent
    std::int32_t max_new_tok = 0;          // what the loop asked for, in all
    base::TokensByVersion earlier;         // tokens of this submission before a sync interrupted it, by version
    bool parked = false;                   // interrupted by a recompute sync: sent again when it ends
    bool queued = false;                   // held by april until a server has a free slot (Impl::waiting)
    Servers servers;                       // the servers it may go to (SampleRequest::engine_first/count)
    std::shared_ptr<StreamCancel> cancel;  // closes its stream, where the API aborts so (ServerDialect::generate)
  };
  enum class SyncPhase { kNone, kAborting, kUpdating };

  HttpBackendOptions opt;
  const LiveTask& task;
  const ServerDialect& dialect;                  // opt.api's
  std::vector<std::int64_t> slots;               // per server: what it says (ServerDialect::seat), or HttpBackendOptions::slots
  std::vector<std::string> models;               // per server: the model a request names ("" where the API names none)
  std::vector<std::int64_t> outstanding;         // per server
  std::vector<bool> lost;                        // per server: dropped by failover
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
  // Overlapped runs (docs/design.md 3b over HTTP): the weights the servers hold,
  // the train step on its own thread (or, rollout only, its report at once),
  // the sync under way, and what the loop submitted meanwhile.
  std::int64_t version = 0;
  std::future<rl::TrainReport> train_running;
  std::optional<rl::TrainReport> train_report_now;
  SyncPhase sync = SyncPhase::kNone;
  std::int64_t sync_version = 0;
  std::future<std::vector<std::pair<std::size_t, std::string>>> sync_update;  // servers that did not answer, and why
  bool sync_ends_now = false;                                                 // rollout only: a sync changes the version alone
  struct Held {
    rl::SampleKey key = 0;
    std::int32_t max_new_tok = 0;
    Servers servers;
  };
  std::vector<Held> held;  // submitted during a sync
  std::string sync_dir;    // the weights the sync under way loads
  std::chrono::steady_clock::time_point last_abort_post;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  // The request threads signal here when they end.
  std::mutex mu;
  std::condition_variable cv;

  Impl(HttpBackendOptions o, const LiveTask& t) : opt(std::move(o)), task(t), dialect(server_dialect(opt.api)) {
    if (opt.urls.empty()) throw std::invalid_argument("no server: give at least one URL");
    if (opt.trainer != nullptr && dialect.weight_load_route() == nullptr) throw std::invalid_argument(dialect.training_refusal());
    if (opt.slots < 0) throw std::invalid_argument("slots per server: 0 (what the server says) or more");
    for (const auto& url : opt.urls) {
      auto seat = dialect.seat(url, opt.slots, opt.connect_timeout_s);
      slots.push_back(seat.slots);
      models.push_back(std::move(seat.model));
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

  // The server of `servers` with room and the fewest requests outstanding
  // (the first of equals); outstanding.size() when none has room. A range
  // whose servers are all lost widens to every server (failover).
  [[nodiscard]] std::size_t least_outstanding() const { return least_outstanding(Servers{}); }
  [[nodiscard]] std::size_t least_outstanding(Servers servers) const {
    std::size_t first = 0, last = outstanding.size();
    if (servers.count > 0) {
      first = static_cast<std::size_t>(servers.first);
      last = std::min(outstanding.size(), first + static_cast<std::size_t>(servers.count));
      if (std::all_of(lost.begin() + static_cast<std::ptrdiff_t>(first), lost.begin() + static_cast<std::ptrdiff_t>(last),
                      [](bool l) { return l; })) {
        first = 0;
        last = outstanding.size();
      }
    }
    std::size_t best = outstanding.size();
    for (std::size_t i = first; i < last; ++i) {
      if (has_room(i) && (best == outstanding.size() || outstanding[i] < outstanding[best])) best = i;
    }
    return best;
  }

  // Held flights sent while servers have room, oldest first; none during a
  // sync (they go with the new weights). A flight whose servers are full
  // waits, and the next one whose servers have room goes (StreamRL's pools:
  // the tail's servers full do not hold the others back).
  void pump() {
    if (sync != SyncPhase::kNone) return;
    for (auto it = waiting.begin(); it != waiting.end() && least_outstanding() < outstanding.size();) {
      const auto found = flights.find(*it);
      if (found == flights.end() || !found->second.queued) {
        it = waiting.erase(it);
        continue;
      }
      Flight& f = found->second;
      if (least_outstanding(f.servers) == outstanding.size()) {
        ++it;
        continue;
      }
      const auto key = *it;
      it = waiting.erase(it);
      f.queued = false;
      send(key, f);
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

  // The request body of sample `key`: slime's resume, the prompt and the
  // tokens so far, `max_new_tok` more at most.
  nlohmann::json body_of(rl::SampleKey key, std::int32_t max_new_tok) const {
    const auto& st = store.at(key);
    auto ids = task.prompt_tokens(st.prompt_id);
    ids.insert(ids.end(), st.tokens.begin(), st.tokens.end());
    const auto held_tok = static_cast<std::uint64_t>(st.tokens.size());
    // The in-process backend's seed for a fresh sample (april serve then draws its
    // tokens); a resumed one draws from a seed of its own, as a server's token
    // index restarts at 0 and the same seed would replay the first draws.
    const auto seed =
        held_tok == 0 ? base::combine_seeds(opt.seed, key) : base::combine_seeds(base::combine_seeds(opt.seed, key), held_tok);
    return dialect.sample_body({std::move(ids), max_new_tok, opt.temperature, opt.top_p, seed, task.end_tokens()});
  }

  // A flight for sample `key` with `body`: sent now to the least loaded
  // server with room, or held until one has (pump).
  Flight launch(rl::SampleKey key, nlohmann::json body, Servers servers) {
    Flight f{outstanding.size(), std::move(body), {}, version, 0, {}, false, false, servers, nullptr};
    // After each pump no waiting flight has room, so one with room now is
    // behind nothing of its own servers.
    const bool behind_none = waiting.empty() || servers.count > 0;
    if (sync == SyncPhase::kNone && behind_none && least_outstanding(servers) < outstanding.size()) {
      send(key, f);
    } else {
      f.queued = true;
      waiting.push_back(key);
    }
    return f;
  }

  // Sends the flight to the least loaded server with room, on a thread of its own.
  void send(rl::SampleKey key, Flight& f) {
    const auto server = least_outstanding(f.servers);
    if (server == outstanding.size()) throw std::logic_error("http backend: sent with no server free");
    ++outstanding[server];
    note(server);
    f.server = server;
    f.version = version;
    dialect.name_request(f.body, fmt::format("april-{}-{}", key, submissions++), models[server]);
    f.cancel = std::make_shared<StreamCancel>();
    const auto url = opt.urls[server];
    const auto connect_s = opt.connect_timeout_s, read_s = opt.request_timeout_s;
    auto* signal = this;
    f.answer = std::async(std::launch::async, [url, body = f.body, connect_s, read_s, signal, cancel = f.cancel, &d = dialect] {
      HttpAnswer a;
      try {
        a.reply = d.generate(url, body, connect_s, read_s, *cancel);
      } catch (const NoReply& e) {
        a.error = e.what();
        a.server_lost = true;
      } catch (const TimedOut& e) {
        a.error = e.what();
        a.server_lost = true;
      } catch (const std::exception& e) {
        a.error = e.what();
      }
      { std::lock_guard<std::mutex> lock(signal->mu); }
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
    if (a.error.empty()) {
      // A reply is read as the server sent it; what no model could have
      // generated stops the run here, naming the server, before a trainer
      // or a task reads it.
      if (const auto why = reply_fault(a.reply, task.vocab())) a.error = fmt::format("{}: {}", opt.urls[f.server], *why);
    }
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
    auto p = progress_of(key, f, static_cast<std::int32_t>(a.reply.output_ids.size()), finished);
    // The server stopped at the request's max_new_tokens, not at an end
    // token: a chunk's end (Policy::chunk_tok) or the length cap, which the
    // loop tells apart. A server's own context limit stops it short of that.
    p.stopped_at_max_new = a.reply.finish == http::FinishKind::Length && p.new_tok == f.max_new_tok;
    return p;
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
    auto data = train_sample_data(batch, store, task, "the servers");
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

  // Every open request aborted: its stream closed (vLLM's abort outside its
  // dev mode; a request of an API that aborts at the server does not read
  // its cancel), and the abort sent to every server left (SGLang's
  // /abort_request {"abort_all": true}; nothing over vLLM's API). A server
  // that does not answer is lost (failover) or the error. Returns the first
  // error of a server that answered otherwise.
  std::string post_aborts() {
    last_abort_post = std::chrono::steady_clock::now();
    close_streams();
    std::string error;
    for (std::size_t i = 0; i < opt.urls.size(); ++i) {
      if (lost[i]) continue;
      try {
        try {
          dialect.abort_server(opt.urls[i], opt.connect_timeout_s, opt.request_timeout_s);
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

  // Each request's stream closed: vLLM's abort (a request that aborts at its server does not read it).
  void close_streams() {
    for (auto& [key, f] : flights) {
      if (f.cancel) f.cancel->cancel();
    }
  }

  // The sync's weights written and loaded on a thread of its own.
  void begin_update() {
    sync = SyncPhase::kUpdating;
    const auto dir = write_weights(sync_version);
    sync_update = std::async(std::launch::async, [urls = opt.urls, lost_now = lost, route = std::string(dialect.weight_load_route()), dir,
                                                  v = sync_version, c = opt.connect_timeout_s, r = opt.request_timeout_s] {
      return update_servers(urls, lost_now, route, dir, v, c, r);
    });
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
    for (const Held& h : std::exchange(held, {})) start(h.key, h.max_new_tok, h.servers);
    return at_cap;
  }

  // A new submission of sample `key`, up to `max_new_tok` tokens.
  void start(rl::SampleKey key, std::int32_t max_new_tok, Servers servers) {
    Flight f = launch(key, body_of(key, max_new_tok), servers);
    f.max_new_tok = max_new_tok;
    flights[key] = std::move(f);
  }

  // Sends the flight again with `body` (its loop-level fields kept).
  void relaunch(rl::SampleKey key, Flight& f, nlohmann::json body) {
    auto earlier = std::move(f.earlier);
    const auto max_new = f.max_new_tok;
    f = launch(key, std::move(body), f.servers);
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

}  // namespace april::live
