#include "adapters/live/detail/kv_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "base/rng.hpp"

namespace april::live {

void apply_serving(const ServingOptions& serving, EngineOptions& options, Transformer& model) {
  options.cuda_graph = serving.cuda_graph;
  options.dtype = serving.bf16 ? torch::kBFloat16 : torch::kFloat32;
  options.prefill_pad_tok = serving.prefill_pad_tok;
  if (serving.fused_attention) model->set_fast_decode_attention(true);
}

KvEngine::KvEngine(Transformer model, EngineOptions options) : model_(std::move(model)), opt_(options) {
  if (opt_.slots < 1) throw std::invalid_argument("engine needs at least one slot");
  model_->to(opt_.device, opt_.dtype);
  model_->eval();
  cache_ = model_->make_cache(opt_.slots, opt_.device, opt_.dtype);
  decode_ = std::make_unique<DecodeGraph>(opt_.device, opt_.cuda_graph);
  slots_.resize(static_cast<std::size_t>(opt_.slots));
}

void KvEngine::add(GenRequest request, RequestSampling sampling) {
  const auto max_seq = model_->config().max_seq;
  if (request.context.empty()) throw std::invalid_argument("a request needs a prompt");
  if (request.max_new < 1) throw std::invalid_argument("a request needs max_new >= 1");
  if (static_cast<std::int64_t>(request.context.size()) + request.max_new > max_seq) {
    throw std::invalid_argument("prompt + max_new exceeds the model's max_seq");
  }
  queue_.emplace_back(std::move(request), std::move(sampling));
}

std::size_t KvEngine::running() const {
  return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.active; }));
}

std::int64_t KvEngine::resident_tok() const {
  std::int64_t n = 0;
  for (const auto& s : slots_) n += s.active ? s.cached : 0;
  return n;
}

void KvEngine::visit_running(const std::function<void(const GenResult&)>& visit) const {
  for (const auto& s : slots_) {
    if (s.active) visit(s.out);
  }
}

std::vector<std::pair<std::uint64_t, std::int32_t>> KvEngine::in_flight_progress() const {
  std::vector<const Slot*> active;
  for (const auto& s : slots_) {
    if (s.active) active.push_back(&s);
  }
  std::sort(active.begin(), active.end(), [](const Slot* a, const Slot* b) { return a->admitted < b->admitted; });
  std::vector<std::pair<std::uint64_t, std::int32_t>> out;
  for (const Slot* s : active) out.emplace_back(s->req.key, static_cast<std::int32_t>(s->out.tokens.size()));
  for (const auto& r : queue_) out.emplace_back(r.first.key, 0);
  return out;
}

std::int32_t KvEngine::sample(const torch::Tensor& logits_row, double temperature, double top_p, std::uint64_t seed, std::int64_t index,
                              float* logprob) {
  const auto logits = logits_row.to(torch::kCPU, torch::kFloat64);
  const auto scaled = temperature > 0 ? logits / temperature : logits;
  const auto logp = torch::log_softmax(scaled, -1);
  const auto* lp = logp.data_ptr<double>();
  const auto v = logp.size(0);
  std::int32_t token = 0;
  if (temperature <= 0) {
    token = static_cast<std::int32_t>(std::max_element(lp, lp + v) - lp);
  } else {
    // Top-p: the smallest set of most likely tokens whose mass reaches top_p.
    std::vector<std::int64_t> order(static_cast<std::size_t>(v));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return lp[a] > lp[b]; });
    std::vector<double> probs;
    double mass = 0;
    for (auto i : order) {
      probs.push_back(std::exp(lp[i]));
      mass += probs.back();
      if (mass >= top_p) break;
    }
    base::Rng rng(seed ^ (static_cast<std::uint64_t>(index) * 0xD1B54A32D192ED03ULL), "sample");
    const double u = rng.uniform01() * mass;
    double acc = 0;
    std::size_t pick = probs.size() - 1;
    for (std::size_t i = 0; i < probs.size(); ++i) {
      acc += probs[i];
      if (u < acc) {
        pick = i;
        break;
      }
    }
    token = static_cast<std::int32_t>(order[pick]);
  }
  if (logprob != nullptr) *logprob = static_cast<float>(lp[token]);
  return token;
}

bool KvEngine::take_token(Slot& s, const torch::Tensor& logits_row) {
  const auto index = static_cast<std::int64_t>(s.req.generated_before) + static_cast<std::int64_t>(s.out.tokens.size());
  float lp = 0;
  const auto& r = s.sampling;
  const auto tok = sample(logits_row, r.temperature.value_or(opt_.temperature), r.top_p.value_or(opt_.top_p), s.req.seed, index, &lp);
  s.seq.push_back(tok);
  s.out.tokens.push_back(tok);
  s.out.logprobs.push_back(lp);
  ++stats_.decoded_tok;
  const bool at_eos = !r.ignore_eos && std::find(opt_.eos.begin(), opt_.eos.end(), tok) != opt_.eos.end();
  if (at_eos || std::find(r.stop_tokens.begin(), r.stop_tokens.end(), tok) != r.stop_tokens.end()) {
    s.out.stop_token = tok;
    return true;
  }
  return static_cast<std::int32_t>(s.out.tokens.size()) >= s.req.max_new;
}

void KvEngine::admit(rl::IterationPoint& point) {
  std::vector<std::size_t> admitted;
  for (std::size_t i = 0; i < slots_.size() && !queue_.empty(); ++i) {
    Slot& s = slots_[i];
    if (s.active) continue;
    s = Slot{};
    s.active = true;
    s.req = std::move(queue_.front().first);
    s.sampling = std::move(queue_.front().second);
    queue_.pop_front();
    s.seq = s.req.context;
    s.out.key = s.req.key;
    s.admitted = admissions_++;
    admitted.push_back(i);
  }
  if (opt_.exact_prefill || admitted.empty()) return;
  // One batched prefill for everything admitted at this boundary.
  std::int64_t t_max = 0;
  for (auto i : admitted) t_max = std::max<std::int64_t>(t_max, static_cast<std::int64_t>(slots_[i].seq.size()));
  // Padded to a multiple of prefill_pad_tok, never past max_seq (which add()
  // keeps every context under).
  const auto pad = std::max<std::int64_t>(1, opt_.prefill_pad_tok);
  t_max = std::min((t_max + pad - 1) / pad * pad, model_->config().max_seq);
  const auto a = static_cast<std::int64_t>(admitted.size());
  point.prefill_requests = static_cast<double>(a);
  point.prefill_longest_tok = static_cast<double>(t_max);
  point.batch += static_cast<double>(a);
  auto tokens = torch::zeros({a, t_max}, torch::kLong);
  std::vector<std::int64_t> lengths, rows;
  auto acc = tokens.accessor<std::int64_t, 2>();
  for (std::int64_t r = 0; r < a; ++r) {
    const Slot& s = slots_[admitted[static_cast<std::size_t>(r)]];
    for (std::size_t j = 0; j < s.seq.size(); ++j) acc[r][static_cast<std::int64_t>(j)] = s.seq[j];
    lengths.push_back(static_cast<std::int64_t>(s.seq.size()));
    rows.push_back(static_cast<std::int64_t>(admitted[static_cast<std::size_t>(r)]));
  }
  const auto opts = torch::TensorOptions().dtype(torch::kLong).device(opt_.device);
  const auto logits =
      model_->prefill(tokens.to(opt_.device), torch::tensor(lengths, opts), torch::tensor(rows, opts), cache_).to(torch::kCPU);
  for (std::int64_t r = 0; r < a; ++r) {
    Slot& s = slots_[admitted[static_cast<std::size_t>(r)]];
    stats_.prefill_tok += static_cast<std::int64_t>(s.seq.size());
    point.prefill_tok += static_cast<double>(s.seq.size());
    s.cached = static_cast<std::int64_t>(s.seq.size());
    // The first new token comes from the prefill's last position: like a
    // vLLM prefill iteration, admission yields one token.
    if (take_token(s, logits[r])) s.out.finished = true;
    s.fresh = true;
  }
}

void KvEngine::clear_cache() {
  if (running() > 0) throw std::logic_error("KvEngine::clear_cache with requests running");
  torch::NoGradGuard no_grad;
  for (auto& k : cache_.k) k.zero_();
  for (auto& v : cache_.v) v.zero_();
}

std::vector<GenResult> KvEngine::step() {
  torch::NoGradGuard no_grad;
  const auto t0 = std::chrono::steady_clock::now();
  rl::IterationPoint point;
  admit(point);
  std::vector<GenResult> done;
  const auto n = static_cast<std::int64_t>(slots_.size());
  std::vector<std::int64_t> tok(static_cast<std::size_t>(n), 0), pos(static_cast<std::size_t>(n), 0);
  std::int64_t active = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.active && s.fresh && !s.out.finished) {
      // The decode writes K/V for every slot. A slot prefilled at this step
      // sits it out, but its cache is live: it gets its own next token at its
      // next position, which its first decode writes again (with the same
      // values), instead of token 0 over its prompt's first position.
      tok[i] = s.seq[static_cast<std::size_t>(s.cached)];
      pos[i] = s.cached;
    }
    if (!s.active || s.out.finished || s.fresh) continue;
    tok[i] = s.seq[static_cast<std::size_t>(s.cached)];
    pos[i] = s.cached;
    point.kv_tok += static_cast<double>(s.cached);
    ++active;
  }
  if (active > 0) {
    const auto logits = decode_->run(model_, cache_, tok, pos).to(torch::kCPU);
    ++stats_.iterations;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (!s.active || s.out.finished || s.fresh) continue;
      ++s.cached;
      if (s.cached < static_cast<std::int64_t>(s.seq.size())) {
        ++stats_.prefill_tok;  // still feeding known tokens
        continue;
      }
      if (take_token(s, logits[static_cast<std::int64_t>(i)])) s.out.finished = true;
    }
  }
  std::vector<Slot*> finished;
  for (auto& s : slots_) {
    s.fresh = false;
    if (s.active && s.out.finished) finished.push_back(&s);
  }
  std::sort(finished.begin(), finished.end(), [](const Slot* a, const Slot* b) { return a->admitted < b->admitted; });
  for (Slot* s : finished) {
    done.push_back(std::move(s->out));
    *s = Slot{};
  }
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats_.busy_s += dt;
  stats_.running_slot_s += dt * static_cast<double>(active);
  point.batch += static_cast<double>(active);
  point.kv_tok += point.prefill_tok;  // resident at the start, as the simulator counts it
  point.time_s = dt;
  point.beside_train = beside_train_;
  last_ = point;
  if (opt_.record_iterations && (active > 0 || point.prefill_requests > 0)) log_.push_back(point);
  return done;
}

std::vector<GenResult> KvEngine::abort_all() {
  std::vector<GenResult> out;
  std::vector<Slot*> active;
  for (auto& s : slots_) {
    if (s.active) active.push_back(&s);
  }
  std::sort(active.begin(), active.end(), [](const Slot* a, const Slot* b) { return a->admitted < b->admitted; });
  for (Slot* s : active) {
    out.push_back(std::move(s->out));
    *s = Slot{};
  }
  for (auto& r : queue_) {
    GenResult g;
    g.key = r.first.key;
    out.push_back(std::move(g));
  }
  queue_.clear();
  return out;
}

std::optional<GenResult> KvEngine::abort(std::uint64_t key) {
  for (auto& s : slots_) {
    if (s.active && s.req.key == key) {
      auto out = std::move(s.out);
      s = Slot{};
      return out;
    }
  }
  const auto it = std::find_if(queue_.begin(), queue_.end(), [key](const auto& r) { return r.first.key == key; });
  if (it == queue_.end()) return std::nullopt;
  queue_.erase(it);
  GenResult g;
  g.key = key;
  return g;
}

}  // namespace april::live
