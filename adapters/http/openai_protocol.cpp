#include "adapters/http/openai_protocol.hpp"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

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

nlohmann::ordered_json logprobs_json(const CompletionChunk& c) {
  if (!c.logprobs) return nullptr;
  const auto lp = [&](std::size_t i) { return i < c.delta_logprobs.size() ? c.delta_logprobs[i] : 0.0f; };
  if (c.chat) {
    // Chat's layout: one entry per token; its text as "token_id:N"
    // (return_tokens_as_token_ids), since a token's bytes need not be text.
    auto content = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < c.delta_ids.size(); ++i) {
      content.push_back({{"token", fmt::format("token_id:{}", c.delta_ids[i])},
                         {"logprob", lp(i)},
                         {"bytes", nullptr},
                         {"top_logprobs", nlohmann::ordered_json::array()}});
    }
    return {{"content", content}};
  }
  auto tokens = nlohmann::ordered_json::array();
  auto lps = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < c.delta_ids.size(); ++i) {
    tokens.push_back(fmt::format("token_id:{}", c.delta_ids[i]));
    lps.push_back(lp(i));
  }
  return {{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", nullptr}, {"text_offset", nlohmann::ordered_json::array()}};
}

nlohmann::ordered_json stop_reason_json(const CompletionChunk& c) {
  if (!c.finish || *c.finish != FinishKind::Stop) return nullptr;
  if (c.stop_string) return *c.stop_string;
  return c.matched_stop >= 0 ? nlohmann::ordered_json(c.matched_stop) : nlohmann::ordered_json(nullptr);
}

// One entry of `choices`: in an event (`streamed`) or a whole reply.
nlohmann::ordered_json choice_json(const CompletionChunk& c, bool streamed) {
  nlohmann::ordered_json choice = {{"index", c.index}};
  if (!c.chat) {
    choice["text"] = c.text;
  } else if (streamed) {
    nlohmann::ordered_json delta = nlohmann::ordered_json::object();
    if (c.first) delta["role"] = "assistant";
    delta["content"] = c.text;
    choice["delta"] = delta;
  } else {
    choice["message"] = {{"role", "assistant"}, {"content", c.text}};
  }
  choice["logprobs"] = logprobs_json(c);
  choice["finish_reason"] = c.finish ? nlohmann::ordered_json(finish_reason_name(*c.finish)) : nlohmann::ordered_json(nullptr);
  choice["stop_reason"] = stop_reason_json(c);
  choice["token_ids"] = c.delta_ids;
  return choice;
}

const char* object_name(bool chat, bool streamed) {
  if (chat) return streamed ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";
}

// The fields both routes read alike: sampling, stop, n, streaming, ids.
void parse_common(const base::JsonValue& v, CompletionCall& c) {
  auto& g = c.generate;
  g.max_new_tokens = kDefaultMaxTokens;
  if (const auto t = v.find("temperature")) g.temperature = t->number(0, 1e6);
  if (const auto p = v.find("top_p")) g.top_p = p->number(1e-9, 1);
  if (const auto seed = v.find("seed")) {
    // vLLM takes a signed 64-bit seed; a client with 64-bit seeds sends its
    // bits as one, and they are read back as sent.
    g.sampling_seed =
        seed->raw().is_number_unsigned()
            ? seed->raw().get<std::uint64_t>()
            : static_cast<std::uint64_t>(seed->integer(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()));
  }
  if (const auto s = v.find("stop_token_ids")) g.stop_token_ids = token_ids(*s);
  if (const auto e = v.find("ignore_eos")) g.ignore_eos = e->boolean();
  if (const auto s = v.find("stream")) c.stream = s->boolean();
  if (const auto so = v.find("stream_options")) {
    so->only_keys({"include_usage", "continuous_usage_stats"});
    if (const auto u = so->find("include_usage")) c.include_usage = u->boolean();
    if (const auto u = so->find("continuous_usage_stats"); u && u->boolean()) u->fail("usage in every chunk is not served");
  }
  if (const auto r = v.find("request_id")) {
    g.rid = r->string();
    if (g.rid.size() > 256) r->fail("longer than 256 bytes");
  }
  if (const auto m = v.find("model")) c.model = m->string();
  if (const auto u = v.find("user")) (void)u->string();
  for (const char* key :
       {"return_token_ids", "return_tokens_as_token_ids", "skip_special_tokens", "spaces_between_special_tokens", "add_special_tokens"}) {
    if (const auto b = v.find(key)) (void)b->boolean();
  }
  if (const auto i = v.find("include_stop_str_in_output")) c.include_stop_str = i->boolean();
  if (const auto e = v.find("echo"); e && e->boolean()) e->fail("echoing the prompt is not served");
  if (const auto k = v.find("top_k")) {
    const auto top_k = k->integer(-1, kMaxId);
    if (top_k != -1 && top_k != 0) k->fail("top-k sampling is not served; only -1 or 0 (all tokens)");
  }
  if (const auto n = v.find("n")) c.n = n->integer(1, kMaxChoices);
  if (const auto b = v.find("best_of"); b && b->integer(1, kMaxChoices) != c.n)
    b->fail(fmt::format("only n ({}) is served: every choice is returned", c.n));
  refuse_unless(v, "min_p", 0, "min-p sampling is not served");
  refuse_unless(v, "min_tokens", 0, "a minimum length is not served");
  refuse_unless(v, "frequency_penalty", 0, "penalties are not served");
  refuse_unless(v, "presence_penalty", 0, "penalties are not served");
  refuse_unless(v, "repetition_penalty", 1, "penalties are not served");
  if (const auto stop = v.find("stop")) {
    std::vector<base::JsonValue> items;
    if (stop->raw().is_string())
      items.push_back(*stop);
    else
      items = stop->elements();
    if (items.size() > kMaxStopStrings) stop->fail(fmt::format("{} stop strings; at most {}", items.size(), kMaxStopStrings));
    for (const auto& item : items) {
      auto text = item.string();
      if (text.size() > kMaxStopBytes) item.fail(fmt::format("a stop string longer than {} bytes", kMaxStopBytes));
      if (!text.empty()) c.stop.push_back(std::move(text));  // vLLM drops empty ones
    }
  }
}

}  // namespace

CompletionCall parse_completion_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  v.only_keys({"model",
               "prompt",
               "max_tokens",
               "temperature",
               "top_p",
               "seed",
               "stop_token_ids",
               "ignore_eos",
               "stream",
               "stream_options",
               "logprobs",
               "request_id",
               "user",
               "return_token_ids",
               "return_tokens_as_token_ids",
               "skip_special_tokens",
               "spaces_between_special_tokens",
               "include_stop_str_in_output",
               "add_special_tokens",
               "echo",
               "n",
               "best_of",
               "top_k",
               "min_p",
               "min_tokens",
               "frequency_penalty",
               "presence_penalty",
               "repetition_penalty",
               "stop"});
  CompletionCall c;
  parse_common(v, c);
  auto& g = c.generate;
  const auto prompt = v.at("prompt");
  if (prompt.is_array() && !prompt.raw().empty() && (prompt.raw().front().is_array() || prompt.raw().front().is_string())) {
    prompt.fail("a batch of prompts is not served; send one per request");
  }
  if (prompt.raw().is_string()) {
    c.prompt_text = prompt.string();
    if (c.prompt_text->empty()) prompt.fail("an empty prompt");
  } else {
    g.input_ids = token_ids(prompt);
    if (g.input_ids.empty()) prompt.fail("an empty prompt");
  }
  if (const auto m = v.find("max_tokens")) g.max_new_tokens = m->integer(1, kMaxId);
  if (const auto l = v.find("logprobs")) {
    if (l->integer(0, kMaxId) != 0) l->fail("top log-probs are not served; only 0 (the sampled token's)");
    c.logprobs = true;
  }
  g.return_logprob = c.logprobs;
  return c;
}

CompletionCall parse_chat_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  v.only_keys({"model",
               "messages",
               "max_tokens",
               "max_completion_tokens",
               "temperature",
               "top_p",
               "seed",
               "stop_token_ids",
               "ignore_eos",
               "stream",
               "stream_options",
               "logprobs",
               "top_logprobs",
               "request_id",
               "user",
               "return_token_ids",
               "return_tokens_as_token_ids",
               "skip_special_tokens",
               "spaces_between_special_tokens",
               "include_stop_str_in_output",
               "add_special_tokens",
               "echo",
               "n",
               "best_of",
               "top_k",
               "min_p",
               "min_tokens",
               "frequency_penalty",
               "presence_penalty",
               "repetition_penalty",
               "stop",
               "add_generation_prompt",
               "continue_final_message",
               "chat_template_kwargs",
               "tools",
               "tool_choice",
               "parallel_tool_calls",
               "response_format",
               "functions",
               "function_call",
               "logit_bias",
               "documents",
               "chat_template"});
  CompletionCall c;
  c.chat = true;
  parse_common(v, c);
  for (const char* key : {"tools", "tool_choice", "functions", "function_call", "documents"}) {
    if (const auto f = v.find(key)) {
      if (!(f->raw().is_array() && f->raw().empty()) && !(f->raw().is_string() && f->raw().get<std::string>() == "none")) {
        f->fail("tool calls are not served");
      }
    }
  }
  if (const auto p = v.find("parallel_tool_calls")) (void)p->boolean();
  if (const auto f = v.find("response_format")) {
    f->only_keys({"type", "json_schema"});
    if (f->at("type").string() != "text") f->at("type").fail("only \"text\" is served (no structured output)");
  }
  if (const auto b = v.find("logit_bias"); b && !(b->is_object() && b->raw().empty())) b->fail("logit biases are not served");
  if (const auto t = v.find("chat_template")) t->fail("a request's own chat template is not served; the server's --chat family is used");
  if (const auto a = v.find("add_generation_prompt"); a && !a->boolean())
    a->fail("only true is served (the reply starts a new assistant turn)");
  if (const auto a = v.find("continue_final_message"); a && a->boolean()) a->fail("only false is served");
  if (const auto k = v.find("chat_template_kwargs")) {
    k->only_keys({"enable_thinking"});
    if (const auto t = k->find("enable_thinking")) c.enable_thinking = t->boolean();
  }
  const auto messages = v.at("messages");
  const auto all = messages.elements();
  if (all.empty()) messages.fail("no messages");
  if (all.size() > 4096) messages.fail(fmt::format("{} messages; at most 4096", all.size()));
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& m = all[i];
    ChatTurn turn;
    const auto role = m.at("role");
    turn.role = role.string();
    if (turn.role == "developer") turn.role = "system";  // OpenAI's newer name for it
    if (turn.role != "system" && turn.role != "user" && turn.role != "assistant") {
      role.fail(fmt::format("role '{}' is not served (system, user or assistant; no tool messages)", turn.role));
    }
    if (turn.role == "system" && i != 0) role.fail("a system message comes only first");
    m.only_keys({"role", "content", "name"});
    if (const auto name = m.find("name")) (void)name->string();
    const auto content = m.at("content");
    if (content.raw().is_string()) {
      turn.content = content.string();
    } else {
      // Content parts: text only.
      for (const auto& part : content.elements()) {
        part.only_keys({"type", "text"});
        const auto type = part.at("type");
        if (type.string() != "text") type.fail(fmt::format("a '{}' part is not served (text only)", type.string()));
        turn.content += part.at("text").string();
      }
    }
    c.messages.push_back(std::move(turn));
  }
  if (c.messages.back().role != "user") all.back().at("role").fail("the last message must be the user's (the reply follows it)");
  c.max_tokens_given = false;
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (const auto m = v.find(key)) {
      c.generate.max_new_tokens = m->integer(1, kMaxId);
      c.max_tokens_given = true;
      break;
    }
  }
  if (const auto l = v.find("logprobs")) c.logprobs = l->boolean();
  if (const auto t = v.find("top_logprobs"); t && t->integer(0, kMaxId) != 0)
    t->fail("top log-probs are not served; only 0 (the sampled token's)");
  c.generate.return_logprob = c.logprobs;
  return c;
}

std::string param_of_path(const std::string& json_pointer) {
  std::string out;
  for (std::size_t i = 0; i < json_pointer.size(); ++i) {
    const char ch = json_pointer[i];
    if (ch == '/') {
      if (i != 0) out += '.';
    } else if (ch == '~' && i + 1 < json_pointer.size() && (json_pointer[i + 1] == '0' || json_pointer[i + 1] == '1')) {
      out += json_pointer[++i] == '0' ? '~' : '/';
    } else {
      out += ch;
    }
  }
  return out;
}

std::string openai_error_json(int status, const std::string& message, const std::string& param) {
  // vLLM's names (create_error_response: HTTPStatus -> the openai client's exception names).
  const char* type = "BadRequestError";
  switch (status) {
    case 404:
      type = "NotFoundError";
      break;
    case 413:
      type = "RequestEntityTooLargeError";
      break;
    case 429:
      type = "RateLimitError";
      break;
    case 500:
      type = "InternalServerError";
      break;
    case 503:
      type = "ServiceUnavailableError";
      break;
    default:
      break;
  }
  const nlohmann::ordered_json j = {{"error",
                                     {{"message", message},
                                      {"type", type},
                                      {"param", param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param)},
                                      {"code", status}}}};
  return dump(j);
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
  const nlohmann::ordered_json j = {{"id", c.id},
                                    {"object", object_name(c.chat, true)},
                                    {"created", c.created_s},
                                    {"model", c.model},
                                    {"choices", nlohmann::ordered_json::array({choice_json(c, true)})}};
  return "data: " + dump(j) + "\n\n";
}

std::string completion_usage_event(const std::string& id, const std::string& model, std::int64_t created_s, std::int64_t prompt_tok,
                                   std::int64_t completion_tok, bool chat) {
  const nlohmann::ordered_json j = {
      {"id", id},
      {"object", object_name(chat, true)},
      {"created", created_s},
      {"model", model},
      {"choices", nlohmann::ordered_json::array()},
      {"usage", {{"prompt_tokens", prompt_tok}, {"completion_tokens", completion_tok}, {"total_tokens", prompt_tok + completion_tok}}}};
  return "data: " + dump(j) + "\n\n";
}

std::string completion_reply_json(const std::vector<CompletionChunk>& choices, std::int64_t prompt_tok) {
  std::int64_t generated = 0;
  auto list = nlohmann::ordered_json::array();
  for (const auto& c : choices) {
    generated += static_cast<std::int64_t>(c.delta_ids.size());
    list.push_back(choice_json(c, false));
  }
  const auto& first = choices.front();
  const nlohmann::ordered_json j = {
      {"id", first.id},
      {"object", object_name(first.chat, false)},
      {"created", first.created_s},
      {"model", first.model},
      {"choices", list},
      {"usage", {{"prompt_tokens", prompt_tok}, {"completion_tokens", generated}, {"total_tokens", prompt_tok + generated}}}};
  return dump(j);
}

std::string completion_reply_json(const CompletionChunk& whole, std::int64_t prompt_tok) {
  return completion_reply_json(std::vector<CompletionChunk>{whole}, prompt_tok);
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
      for (const auto& x : values->elements())
        out.logprobs.push_back(static_cast<float>(x.raw().is_null() ? 0.0 : x.number(-1e300, 1e300)));
    }
    if (out.ids && !out.logprobs.empty() && out.logprobs.size() != out.ids->size()) {
      lp->fail(fmt::format("{} log-probs for {} tokens", out.logprobs.size(), out.ids->size()));
    }
  }
  if (const auto f = choice.find("finish_reason")) {
    const auto name = f->string();
    if (name == "stop")
      out.finish = FinishKind::Stop;
    else if (name == "length")
      out.finish = FinishKind::Length;
    else if (name == "abort")
      out.finish = FinishKind::Abort;
    else
      f->fail(fmt::format("'{}' where stop, length or abort was expected", name));
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
  if (const auto e = base::parse_json(data, doc))
    throw base::ConfigError(fmt::format("{}: not JSON at byte {}: {}", where, e->byte, e->reason));
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
    throw base::ConfigError(
        fmt::format("{}: the stream ended before its finish reason ({} tokens received)", source_, partial_.output_ids.size()));
  }
  return partial_;
}

}  // namespace april::http
