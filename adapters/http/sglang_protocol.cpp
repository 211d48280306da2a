#include "adapters/http/sglang_protocol.hpp"

#include <fmt/format.h>

#include <limits>
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

}  // namespace

GenerateCall parse_generate_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  v.only_keys({"input_ids", "text", "input_embeds", "rid", "sampling_params", "return_logprob", "logprob_start_len", "top_logprobs_num",
               "return_text_in_logprobs", "stream"});
  if (v.has("text")) v.at("text").fail("text prompts are not served: april serve holds no tokenizer; send input_ids");
  if (v.has("input_embeds")) v.at("input_embeds").fail("not served; send input_ids");
  GenerateCall c;
  const auto ids = v.at("input_ids");
  if (ids.is_array() && !ids.raw().empty() && ids.raw().front().is_array())
    ids.fail("a batch of prompts is not served; send one per request");
  c.input_ids = token_ids(ids);
  if (c.input_ids.empty()) ids.fail("an empty prompt");
  if (const auto rid = v.find("rid")) c.rid = rid->string();
  if (const auto s = v.find("stream"); s && s->boolean()) s->fail("streaming is not served; send stream false");
  if (const auto r = v.find("return_logprob")) c.return_logprob = r->boolean();
  if (const auto n = v.find("top_logprobs_num"); n && n->integer(0, kMaxId) != 0) n->fail("top log-probs are not served; only 0");
  if (const auto l = v.find("logprob_start_len")) (void)l->integer(-1, kMaxId);
  if (const auto t = v.find("return_text_in_logprobs")) (void)t->boolean();
  if (const auto sp = v.find("sampling_params")) {
    sp->only_keys({"max_new_tokens", "temperature", "top_p", "top_k", "min_p", "stop", "stop_token_ids", "skip_special_tokens",
                   "spaces_between_special_tokens", "no_stop_trim", "ignore_eos", "min_new_tokens", "n", "frequency_penalty",
                   "presence_penalty", "repetition_penalty", "sampling_seed", "custom_params"});
    if (const auto m = sp->find("max_new_tokens")) c.max_new_tokens = m->integer(1, kMaxId);
    if (const auto t = sp->find("temperature")) c.temperature = t->number(0, 1e6);
    if (const auto p = sp->find("top_p")) c.top_p = p->number(1e-9, 1);
    if (const auto k = sp->find("top_k")) {
      const auto top_k = k->integer(-1, kMaxId);
      if (top_k != -1 && top_k != 0) k->fail("top-k sampling is not served; only -1 (all tokens)");
    }
    refuse_unless(*sp, "min_p", 0, "min-p sampling is not served");
    refuse_unless(*sp, "min_new_tokens", 0, "a minimum length is not served");
    refuse_unless(*sp, "n", 1, "one sample per request");
    refuse_unless(*sp, "frequency_penalty", 0, "penalties are not served");
    refuse_unless(*sp, "presence_penalty", 0, "penalties are not served");
    refuse_unless(*sp, "repetition_penalty", 1, "penalties are not served");
    if (const auto stop = sp->find("stop")) {
      const bool empty =
          (stop->raw().is_array() && stop->raw().empty()) || (stop->raw().is_string() && stop->raw().get<std::string>().empty());
      if (!empty) stop->fail("stop strings are not served (no tokenizer); send stop_token_ids");
    }
    if (const auto s = sp->find("stop_token_ids")) c.stop_token_ids = token_ids(*s);
    if (const auto e = sp->find("ignore_eos")) c.ignore_eos = e->boolean();
    if (const auto seed = sp->find("sampling_seed")) {
      // Any 64-bit value (Python's ints are unbounded): april's own seeds use all 64 bits.
      if (seed->raw().is_number_unsigned())
        c.sampling_seed = seed->raw().get<std::uint64_t>();
      else
        c.sampling_seed = static_cast<std::uint64_t>(seed->integer(0, std::numeric_limits<std::int64_t>::max()));
    }
    for (const char* key : {"skip_special_tokens", "spaces_between_special_tokens", "no_stop_trim"}) {
      if (const auto b = sp->find(key)) (void)b->boolean();
    }
  }
  return c;
}

AbortCall parse_abort_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body.empty() ? std::string("{}") : body, source, doc);
  v.only_keys({"rid", "abort_all"});
  AbortCall a;
  if (const auto r = v.find("rid")) a.rid = r->string();
  if (const auto all = v.find("abort_all")) a.abort_all = all->boolean();
  return a;
}

UpdateWeightsCall parse_update_weights_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  UpdateWeightsCall u;
  u.model_path = v.at("model_path").string();
  if (u.model_path.empty()) v.at("model_path").fail("an empty path");
  if (const auto w = v.find("weight_version")) u.weight_version = w->string();
  if (const auto a = v.find("abort_all_requests")) u.abort_all_requests = a->boolean();
  if (const auto f = v.find("flush_cache")) (void)f->boolean();
  if (const auto l = v.find("load_format")) l->fail("only the default load format (safetensors, as saved by transformers) is served");
  return u;
}

PauseCall parse_pause_call(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body.empty() ? std::string("{}") : body, source, doc);
  PauseCall p;
  if (const auto m = v.find("mode")) {
    const auto mode = m->string();
    if (mode == "in_place")
      p.abort_in_flight = false;
    else if (mode != "abort")
      m->fail(fmt::format("'{}': abort or in_place (retract, which recomputes the KV, is not served)", mode));
  }
  return p;
}

std::string update_weights_reply_json(bool success, const std::string& message) {
  return nlohmann::json({{"success", success}, {"message", message}, {"num_paused_requests", 0}})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string generate_reply_json(const GenerateOutcome& o) {
  nlohmann::ordered_json finish;
  switch (o.finish) {
    case FinishKind::Stop:
      finish = {{"type", "stop"}, {"matched", o.matched_stop}};
      break;
    case FinishKind::Length:
      finish = {{"type", "length"}, {"length", o.output_ids.size()}};
      break;
    case FinishKind::Abort:
      finish = {{"type", "abort"}, {"message", o.abort_message}, {"status_code", nullptr}, {"err_type", nullptr}};
      break;
  }
  nlohmann::ordered_json meta = {{"id", o.rid},
                                 {"finish_reason", finish},
                                 {"prompt_tokens", o.prompt_tokens},
                                 {"completion_tokens", o.output_ids.size()},
                                 {"cached_tokens", 0},
                                 {"weight_version", o.weight_version},
                                 {"e2e_latency", o.e2e_latency_s}};
  if (o.return_logprob) {
    auto lps = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < o.output_ids.size(); ++i) {
      lps.push_back({i < o.output_logprobs.size() ? o.output_logprobs[i] : 0.0f, o.output_ids[i], nullptr});
    }
    meta["output_token_logprobs"] = lps;
    meta["output_token_logprobs_length"] = o.output_ids.size();
  }
  const nlohmann::ordered_json j = {{"output_ids", o.output_ids}, {"meta_info", meta}};
  // An abort message may carry an engine's text that is not UTF-8: replaced, not thrown on.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string error_json(const std::string& message) {
  return nlohmann::json({{"error", {{"message", message}}}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

GenerateReply parse_generate_reply(const std::string& body, const std::string& source) {
  nlohmann::json doc;
  const auto v = parse_object(body, source, doc);
  GenerateReply r;
  std::optional<std::vector<std::int32_t>> ids;
  if (const auto o = v.find("output_ids"))
    ids = token_ids(*o);
  else if (const auto t = v.find("token_ids"))
    ids = token_ids(*t);
  const auto meta = v.at("meta_info");
  if (const auto lps = meta.find("output_token_logprobs")) {
    std::vector<std::int32_t> from_triples;
    for (const auto& triple : lps->elements()) {
      const auto items = triple.elements();
      if (items.size() < 2) triple.fail("a [logprob, token id, text] triple was expected");
      r.output_logprobs.push_back(static_cast<float>(items[0].raw().is_null() ? 0.0 : items[0].number(-1e300, 1e300)));
      from_triples.push_back(static_cast<std::int32_t>(items[1].integer(0, kMaxId)));
    }
    if (ids && *ids != from_triples) lps->fail("its token ids differ from output_ids");
    if (!ids) ids = std::move(from_triples);
  }
  if (!ids) v.fail("neither output_ids nor meta_info.output_token_logprobs: no tokens to read");
  r.output_ids = std::move(*ids);
  const auto finish = meta.at("finish_reason");
  const auto type = finish.at("type").string();
  if (type == "stop")
    r.finish = FinishKind::Stop;
  else if (type == "length")
    r.finish = FinishKind::Length;
  else if (type == "abort") {
    r.finish = FinishKind::Abort;
    if (const auto m = finish.find("message")) r.abort_message = m->raw().is_string() ? m->string() : m->raw().dump();
  } else {
    finish.at("type").fail(fmt::format("'{}' where stop, length or abort was expected", type));
  }
  if (const auto w = meta.find("weight_version")) r.weight_version = w->raw().is_string() ? w->string() : w->raw().dump();
  return r;
}

std::string error_message_of(const std::string& body) {
  nlohmann::json doc;
  if (!base::parse_json(body, doc) && doc.is_object()) {
    if (doc.contains("error") && doc["error"].is_object() && doc["error"].contains("message") && doc["error"]["message"].is_string()) {
      return doc["error"]["message"].get<std::string>();
    }
    if (doc.contains("message") && doc["message"].is_string()) return doc["message"].get<std::string>();
  }
  return body.substr(0, 200);
}

}  // namespace april::http
