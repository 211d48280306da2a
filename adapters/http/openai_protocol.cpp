#include "adapters/http/openai_protocol.hpp"

#include <fmt/format.h>

#include <limits>
#include <string_view>
#include <nlohmann/json.hpp>

#include "adapters/http/json_fields.hpp"
#include "base/config.hpp"
#include "base/json_value.hpp"

namespace april::http {
namespace {

constexpr std::int64_t kMaxId = detail::kMaxTokenId;
using detail::parse_object;
using detail::refuse_unless;
using detail::token_ids;
// OpenAI's default max_tokens for /v1/completions (vLLM keeps it when the
// request names none and the context allows).
constexpr std::int64_t kDefaultMaxTokens = 16;

std::string dump(const nlohmann::ordered_json& j) { return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace); }

nlohmann::ordered_json choice_json(const CompletionChunk& c) {
  nlohmann::ordered_json choice = {{"index", 0}, {"text", ""}};
  if (c.logprobs) {
    auto tokens = nlohmann::ordered_json::array();
    auto lps = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < c.delta_ids.size(); ++i) {
      tokens.push_back(fmt::format("token_id:{}", c.delta_ids[i]));
      lps.push_back(i < c.delta_logprobs.size() ? c.delta_logprobs[i] : 0.0f);
    }
    choice["logprobs"] = {{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", nullptr}, {"text_offset", nlohmann::ordered_json::array()}};
  } else {
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] = c.finish ? nlohmann::ordered_json(finish_reason_name(*c.finish)) : nlohmann::ordered_json(nullptr);
  choice["stop_reason"] = c.finish && *c.finish == FinishKind::Stop && c.matched_stop >= 0 ? nlohmann::ordered_json(c.matched_stop)
                                                                                             : nlohmann::ordered_json(nullptr);
  choice["token_ids"] = c.delta_ids;
  return choice;
}

}  // namespace

CompletionCall parse_completion_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  v.only_keys({"model", "prompt", "max_tokens", "temperature", "top_p", "seed", "stop_token_ids", "ignore_eos", "stream", "stream_options",
               "logprobs", "request_id", "user", "return_token_ids", "return_tokens_as_token_ids", "skip_special_tokens",
               "spaces_between_special_tokens", "include_stop_str_in_output", "add_special_tokens", "echo", "n", "best_of", "top_k", "min_p",
               "min_tokens", "frequency_penalty", "presence_penalty", "repetition_penalty", "stop"});
  CompletionCall c;
  auto& g = c.generate;
  const auto prompt = v.at("prompt");
  if (prompt.raw().is_string()) prompt.fail("text prompts are not served: april serve holds no tokenizer; send token ids");
  if (prompt.is_array() && !prompt.raw().empty() && (prompt.raw().front().is_array() || prompt.raw().front().is_string())) {
    prompt.fail("a batch of prompts is not served; send one per request");
  }
  g.input_ids = token_ids(prompt);
  if (g.input_ids.empty()) prompt.fail("an empty prompt");
  g.max_new_tokens = kDefaultMaxTokens;
  if (const auto m = v.find("max_tokens")) g.max_new_tokens = m->integer(1, kMaxId);
  if (const auto t = v.find("temperature")) g.temperature = t->number(0, 1e6);
  if (const auto p = v.find("top_p")) g.top_p = p->number(1e-9, 1);
  if (const auto seed = v.find("seed")) {
    // vLLM takes a signed 64-bit seed; a client with 64-bit seeds sends its
    // bits as one, and they are read back as sent.
    g.sampling_seed = seed->raw().is_number_unsigned() ? seed->raw().get<std::uint64_t>()
                                                       : static_cast<std::uint64_t>(seed->integer(std::numeric_limits<std::int64_t>::min(),
                                                                                                  std::numeric_limits<std::int64_t>::max()));
  }
  if (const auto s = v.find("stop_token_ids")) g.stop_token_ids = token_ids(*s);
  if (const auto e = v.find("ignore_eos")) g.ignore_eos = e->boolean();
  if (const auto s = v.find("stream")) c.stream = s->boolean();
  if (const auto so = v.find("stream_options")) {
    so->only_keys({"include_usage", "continuous_usage_stats"});
    if (const auto u = so->find("include_usage")) c.include_usage = u->boolean();
    if (const auto u = so->find("continuous_usage_stats"); u && u->boolean()) u->fail("usage in every chunk is not served");
  }
  if (const auto l = v.find("logprobs")) {
    if (l->integer(0, kMaxId) != 0) l->fail("top log-probs are not served; only 0 (the sampled token's)");
    c.logprobs = true;
  }
  g.return_logprob = c.logprobs;
  if (const auto r = v.find("request_id")) g.rid = r->string();
  if (const auto m = v.find("model")) c.model = m->string();
  if (const auto u = v.find("user")) (void)u->string();
  for (const char* key : {"return_token_ids", "return_tokens_as_token_ids", "skip_special_tokens", "spaces_between_special_tokens",
                          "include_stop_str_in_output", "add_special_tokens"}) {
    if (const auto b = v.find(key)) (void)b->boolean();
  }
  if (const auto e = v.find("echo"); e && e->boolean()) e->fail("echoing the prompt is not served");
  if (const auto k = v.find("top_k")) {
    const auto top_k = k->integer(-1, kMaxId);
    if (top_k != -1 && top_k != 0) k->fail("top-k sampling is not served; only -1 or 0 (all tokens)");
  }
  refuse_unless(v, "n", 1, "one sample per request");
  refuse_unless(v, "best_of", 1, "one sample per request");
  refuse_unless(v, "min_p", 0, "min-p sampling is not served");
  refuse_unless(v, "min_tokens", 0, "a minimum length is not served");
  refuse_unless(v, "frequency_penalty", 0, "penalties are not served");
  refuse_unless(v, "presence_penalty", 0, "penalties are not served");
  refuse_unless(v, "repetition_penalty", 1, "penalties are not served");
  if (const auto stop = v.find("stop")) {
    const bool empty = (stop->raw().is_array() && stop->raw().empty()) || (stop->raw().is_string() && stop->raw().get<std::string>().empty());
    if (!empty) stop->fail("stop strings are not served (no tokenizer); send stop_token_ids");
  }
  return c;
}

const char* finish_reason_name(FinishKind kind) {
  switch (kind) {
    case FinishKind::Stop:
      return "stop";
    case FinishKind::Length:
      return "length";
    case FinishKind::Abort:
      return "abort";
  }
  return "abort";
}

std::string completion_chunk_event(const CompletionChunk& c) {
  const nlohmann::ordered_json j = {{"id", c.id}, {"object", "text_completion"}, {"created", c.created_s}, {"model", c.model},
                                    {"choices", nlohmann::ordered_json::array({choice_json(c)})}};
  return "data: " + dump(j) + "\n\n";
}

std::string completion_usage_event(const std::string& id, const std::string& model, std::int64_t created_s, std::int64_t prompt_tok,
                                   std::int64_t completion_tok) {
  const nlohmann::ordered_json j = {
      {"id", id},
      {"object", "text_completion"},
      {"created", created_s},
      {"model", model},
      {"choices", nlohmann::ordered_json::array()},
      {"usage", {{"prompt_tokens", prompt_tok}, {"completion_tokens", completion_tok}, {"total_tokens", prompt_tok + completion_tok}}}};
  return "data: " + dump(j) + "\n\n";
}

std::string completion_reply_json(const CompletionChunk& whole, std::int64_t prompt_tok) {
  const auto n = static_cast<std::int64_t>(whole.delta_ids.size());
  const nlohmann::ordered_json j = {
      {"id", whole.id},
      {"object", "text_completion"},
      {"created", whole.created_s},
      {"model", whole.model},
      {"choices", nlohmann::ordered_json::array({choice_json(whole)})},
      {"usage", {{"prompt_tokens", prompt_tok}, {"completion_tokens", n}, {"total_tokens", prompt_tok + n}}}};
  return dump(j);
}

void CompletionStreamReader::feed(const char* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != '\r') buffer_.push_back(data[i]);  // CRLF and LF lines alike
  }
  for (;;) {
    const auto end = buffer_.find("\n\n");
    if (end == std::string::npos) break;
    // An event's data lines joined; comments (":...") and other fields ignored.
    std::string payload;
    bool has_data = false;
    std::size_t at = 0;
    while (at < end) {
      auto eol = buffer_.find('\n', at);
      if (eol == std::string::npos || eol > end) eol = end;
      const auto line = std::string_view(buffer_).substr(at, eol - at);
      if (line.rfind("data:", 0) == 0) {
        auto value = line.substr(5);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        if (has_data) payload += '\n';
        payload.append(value);
        has_data = true;
      }
      at = eol + 1;
    }
    buffer_.erase(0, end + 2);
    if (has_data) event(payload);
  }
  if (buffer_.size() > kMaxEventBytes) {
    throw base::ConfigError(fmt::format("{}: an event longer than {} bytes", source_, kMaxEventBytes));
  }
}

namespace {

// Choice 0's ids and log-probs (token_ids, else "token_id:N" log-prob
// tokens; where both are there they must agree) and its finish reason.
struct ChoiceRead {
  std::optional<std::vector<std::int32_t>> ids;
  std::vector<float> logprobs;
  std::optional<FinishKind> finish;
};

ChoiceRead read_choice(const base::JsonValue& choice) {
  ChoiceRead out;
  if (const auto index = choice.find("index"); index && index->integer(0, kMaxId) != 0) index->fail("one choice (index 0) was asked for");
  if (const auto t = choice.find("token_ids")) out.ids = token_ids(*t);
  if (const auto lp = choice.find("logprobs")) {
    if (const auto tokens = lp->find("tokens")) {
      // return_tokens_as_token_ids: "token_id:N" (AReaL reads ids so from older servers).
      std::vector<std::int32_t> from_strings;
      for (const auto& t : tokens->elements()) {
        const auto text = t.string();
        std::size_t used = 0;
        long long id = -1;
        try {
          if (text.rfind("token_id:", 0) == 0) id = std::stoll(text.substr(9), &used);
        } catch (const std::exception&) {
          id = -1;
        }
        if (id < 0 || id > kMaxId || used != text.size() - 9) t.fail("\"token_id:N\" was expected (return_tokens_as_token_ids)");
        from_strings.push_back(static_cast<std::int32_t>(id));
      }
      if (out.ids && *out.ids != from_strings) tokens->fail("its token ids differ from token_ids");
      if (!out.ids) out.ids = std::move(from_strings);
    }
    if (const auto values = lp->find("token_logprobs")) {
      for (const auto& x : values->elements()) out.logprobs.push_back(static_cast<float>(x.raw().is_null() ? 0.0 : x.number(-1e300, 1e300)));
    }
    if (out.ids && !out.logprobs.empty() && out.logprobs.size() != out.ids->size()) {
      lp->fail(fmt::format("{} log-probs for {} tokens", out.logprobs.size(), out.ids->size()));
    }
  }
  if (const auto f = choice.find("finish_reason")) {
    const auto name = f->string();
    if (name == "stop") out.finish = FinishKind::Stop;
    else if (name == "length") out.finish = FinishKind::Length;
    else if (name == "abort") out.finish = FinishKind::Abort;
    else f->fail(fmt::format("'{}' where stop, length or abort was expected", name));
  }
  return out;
}

}  // namespace

GenerateReply parse_completion_reply(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  const auto choices = v.at("choices");
  const auto all = choices.elements();
  if (all.size() != 1) choices.fail(fmt::format("{} choices where one was asked for", all.size()));
  auto read = read_choice(all.front());
  if (!read.ids) all.front().fail("no token ids (neither token_ids nor \"token_id:N\" log-prob tokens): send return_token_ids");
  if (!read.finish) all.front().fail("no finish reason");
  GenerateReply r;
  r.output_ids = std::move(*read.ids);
  r.output_logprobs = std::move(read.logprobs);
  r.finish = *read.finish;
  return r;
}

void CompletionStreamReader::event(const std::string& data) {
  ++events_;
  const auto where = fmt::format("{} event {}", source_, events_);
  if (done_) throw base::ConfigError(fmt::format("{}: data after [DONE]", where));
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  nlohmann::json doc;
  if (const auto e = base::parse_json(data, doc)) throw base::ConfigError(fmt::format("{}: not JSON at byte {}: {}", where, e->byte, e->reason));
  const base::JsonValue v(doc, where);
  if (!v.is_object()) v.fail("an event that is not a JSON object");
  if (v.has("error")) v.at("error").fail(fmt::format("the server sent an error: {}", error_message_of(data)));
  const auto choices = v.at("choices").elements();  // empty: the usage event
  for (const auto& choice : choices) {
    auto read = read_choice(choice);
    if (read.ids && !read.ids->empty()) {
      if (reply_) choice.fail("tokens after the finish reason");
      partial_.output_ids.insert(partial_.output_ids.end(), read.ids->begin(), read.ids->end());
      partial_.output_logprobs.insert(partial_.output_logprobs.end(), read.logprobs.begin(), read.logprobs.end());
    }
    if (read.finish) {
      if (reply_) choice.at("finish_reason").fail("a second finish reason");
      reply_ = read.finish;
      partial_.finish = *reply_;
    }
  }
}

GenerateReply CompletionStreamReader::reply() const {
  if (!reply_) {
    throw base::ConfigError(fmt::format("{}: the stream ended before its finish reason ({} tokens received)", source_, partial_.output_ids.size()));
  }
  return partial_;
}

}  // namespace april::http
