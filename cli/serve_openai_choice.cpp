#include "cli/serve_openai_choice.hpp"

#include <chrono>
#include <mutex>

namespace april::cli {

ChoiceRun::ChoiceRun(std::string rid, std::shared_ptr<live::TokenStream> tokens, std::shared_future<http::GenerateOutcome> outcome,
                     const hf::Tokenizer* tokenizer, const std::vector<std::string>& stops, bool include_stop)
    : rid_(std::move(rid)), tokens_(std::move(tokens)), outcome_(std::move(outcome)), include_stop_(include_stop) {
  if (tokenizer != nullptr) text_.emplace(*tokenizer, stops);
}

void ChoiceRun::wait(std::chrono::milliseconds wait) const {
  std::unique_lock<std::mutex> lock(tokens_->mu);
  tokens_->grew.wait_for(
      lock, wait, [&] { return tokens_->ids.size() > seen_ || outcome_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
}

void ChoiceRun::keep(std::int32_t id, float logprob, bool with_logprob, http::CompletionChunk& delta) {
  ++seen_;
  if (stopped_) return;
  std::string piece;
  if (text_) {
    piece = text_->add(id);
    stopped_ = text_->stopped();
    if (stopped_ && include_stop_) piece += *text_->stop();
  }
  delta.delta_ids.push_back(id);
  if (with_logprob) delta.delta_logprobs.push_back(logprob);
  delta.text += piece;
  ++kept_;
}

bool ChoiceRun::take(live::EngineServer& engine, http::CompletionChunk& delta) {
  delta.delta_ids.clear();
  delta.delta_logprobs.clear();
  delta.text.clear();
  delta.finish.reset();
  delta.stop_string.reset();
  if (over_) return true;
  const bool ready = outcome_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  if (!ready) {
    std::vector<std::int32_t> ids;
    std::vector<float> lps;
    {
      std::lock_guard<std::mutex> lock(tokens_->mu);
      const auto from = static_cast<std::ptrdiff_t>(seen_);
      ids.assign(tokens_->ids.begin() + from, tokens_->ids.end());
      lps.assign(tokens_->logprobs.begin() + std::min<std::ptrdiff_t>(from, static_cast<std::ptrdiff_t>(tokens_->logprobs.size())),
                 tokens_->logprobs.end());
    }
    const bool was_stopped = stopped_;
    for (std::size_t i = 0; i < ids.size(); ++i) keep(ids[i], i < lps.size() ? lps[i] : 0.0f, i < lps.size(), delta);
    // A stop string: the request is done; what the engine makes after it is not kept.
    if (stopped_ && !was_stopped) (void)engine.abort({rid_, false, true});
    return false;
  }
  // The outcome holds the whole output: what the stream has not carried comes from it.
  const auto& out = outcome_.get();
  for (std::size_t i = seen_; i < out.output_ids.size(); ++i) {
    const bool with_lp = i < out.output_logprobs.size();
    keep(out.output_ids[i], with_lp ? out.output_logprobs[i] : 0.0f, with_lp, delta);
  }
  if (text_) delta.text += text_->finish();
  if (stopped_) {
    delta.finish = http::FinishKind::Stop;
    delta.stop_string = text_->stop();
    delta.matched_stop = -1;
  } else {
    delta.finish = out.finish;
    delta.matched_stop = out.matched_stop;
  }
  over_ = true;
  return true;
}

}  // namespace april::cli
