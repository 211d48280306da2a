#include "hf/chat_template.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>

#include "base/config.hpp"
#include "hf/unicode_classes.hpp"
#include "hf/utf8.hpp"

namespace april::hf {
namespace {

constexpr std::array<std::pair<const char*, ChatFamily>, 5> kFamilies = {{
    {"qwen2", ChatFamily::kQwen2},
    {"qwen2.5", ChatFamily::kQwen2_5},
    {"qwen3", ChatFamily::kQwen3},
    {"llama3", ChatFamily::kLlama3},
    {"llama3.1", ChatFamily::kLlama3_1},
}};

// Jinja's `trim` filter is Python's str.strip(): it removes the characters
// str.isspace() accepts, White_Space and U+001C..U+001F.
bool python_space(char32_t cp) { return unicode::char_class(cp) == unicode::CharClass::kWhitespace || (cp >= 0x1C && cp <= 0x1F); }

std::string jinja_trim(const std::string& text) {
  utf8::Decoded d;
  if (utf8::decode(text, d)) throw base::ConfigError("chat prompt: the text is not valid UTF-8");
  std::size_t begin = 0, end = d.cps.size();
  while (begin < end && python_space(d.cps[begin])) ++begin;
  while (end > begin && python_space(d.cps[end - 1])) --end;
  return text.substr(d.byte_offsets[begin], d.byte_offsets[end] - d.byte_offsets[begin]);
}

// ChatML, the Qwen families' format.
std::string chatml_turn(std::string_view role, std::string_view content) {
  return fmt::format("<|im_start|>{}\n{}<|im_end|>\n", role, content);
}

// Qwen/Qwen2-7B-Instruct, tokenizer_config.json "chat_template"
// (https://huggingface.co/Qwen/Qwen2-7B-Instruct/blob/main/tokenizer_config.json):
//   {% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}
//   {{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}
//   {{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}
//   {% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}
// Qwen/Qwen2.5-7B-Instruct's (the same page for that model; copied in
// github.com/chujiezheng/chat_templates, chat_templates/qwen2.5-instruct.jinja)
// differs, without tools, only in the default system prompt:
//   '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n'
std::string render_qwen2(const std::vector<ChatMessage>& m, std::string_view default_system) {
  std::string out;
  if (m.front().role != "system") out += chatml_turn("system", default_system);
  for (const auto& msg : m) out += chatml_turn(msg.role, msg.content);
  return out + "<|im_start|>assistant\n";
}

// An earlier assistant answer without its reasoning: Qwen3's template keeps
// what follows the last "</think>", with the newlines after it stripped
// (content.split('</think>')[-1].lstrip('\n')).
std::string qwen3_answer(const std::string& content) {
  const auto end = content.rfind("</think>");
  if (end == std::string::npos) return content;
  auto rest = content.substr(end + 8);
  const auto first = rest.find_first_not_of('\n');
  return first == std::string::npos ? std::string() : rest.substr(first);
}

// Qwen/Qwen3-0.6B, tokenizer_config.json "chat_template"
// (https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/tokenizer_config.json; copied
// in llama.cpp, models/templates/Qwen-Qwen3-0.6B.jinja), without tools:
//   {%- if messages[0].role == 'system' %}{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}{%- endif %}
//   ... {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }} (a user message)
//   {%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}
//     {%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
//   ... an assistant message: its content after the last '</think>', stripped of leading newlines,
//   when it comes before the last user message (every assistant message here).
// No default system prompt.
std::string render_qwen3(const std::vector<ChatMessage>& m, std::optional<bool> enable_thinking) {
  std::string out;
  for (const auto& msg : m) out += chatml_turn(msg.role, msg.role == "assistant" ? qwen3_answer(msg.content) : msg.content);
  out += "<|im_start|>assistant\n";
  if (enable_thinking == false) out += "<think>\n\n</think>\n\n";
  return out;
}

std::string llama_turn(std::string_view role, std::string_view content) {
  return fmt::format("<|start_header_id|>{}<|end_header_id|>\n\n{}<|eot_id|>", role, content);
}

// meta-llama/Meta-Llama-3-8B-Instruct, tokenizer_config.json "chat_template"
// (https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/blob/main/tokenizer_config.json;
// quoted in llama.cpp, tests/test-chat-template.cpp, "Llama-3"):
//   {% set loop_messages = messages %}{% for message in loop_messages %}
//   {% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}
//   {% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}
//   {% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}
// A system prompt is a message like the others; no default.
std::string render_llama3(const std::vector<ChatMessage>& m) {
  std::string out = "<|begin_of_text|>";
  for (const auto& msg : m) out += llama_turn(msg.role, jinja_trim(msg.content));
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

// meta-llama/Llama-3.1-8B-Instruct, tokenizer_config.json "chat_template"
// (https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/tokenizer_config.json;
// copied in llama.cpp, models/templates/meta-llama-Llama-3.1-8B-Instruct.jinja, to
// which Llama-3.3-70B-Instruct's is identical), without tools:
//   {{- bos_token }} ... {%- if not date_string is defined %}{%- set date_string = "26 Jul 2024" %}{%- endif %}
//   {%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content']|trim %} ...
//   {%- else %}{%- set system_message = "" %}{%- endif %}
//   {{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
//   {{- "Cutting Knowledge Date: December 2023\n" }}{{- "Today Date: " + date_string + "\n\n" }}
//   {{- system_message }}{{- "<|eot_id|>" }}
//   ... {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
//   {%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}
// The system block is always there; Hugging Face does not pass date_string,
// so the date is the template's own. (Llama 3.2's template writes today's
// date instead: not supported.)
std::string render_llama3_1(const std::vector<ChatMessage>& m) {
  const bool has_system = m.front().role == "system";
  const std::string system = has_system ? jinja_trim(m.front().content) : std::string();
  std::string out =
      "<|begin_of_text|>" + llama_turn("system", "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" + system);
  for (std::size_t i = has_system ? 1 : 0; i < m.size(); ++i) out += llama_turn(m[i].role, jinja_trim(m[i].content));
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

}  // namespace

ChatFamily chat_family_from_name(const std::string& name) {
  for (const auto& [n, family] : kFamilies) {
    if (name == n) return family;
  }
  throw base::ConfigError(
      fmt::format("chat template '{}' is not supported; april writes those of {}", name, fmt::join(chat_family_names(), ", ")));
}

const char* chat_family_name(ChatFamily family) {
  for (const auto& [n, f] : kFamilies) {
    if (f == family) return n;
  }
  return "?";
}

std::vector<std::string> chat_family_names() {
  std::vector<std::string> out;
  for (const auto& [n, family] : kFamilies) out.emplace_back(n);
  return out;
}

std::string render_chat_messages(ChatFamily family, const std::vector<ChatMessage>& messages, std::optional<bool> enable_thinking) {
  if (enable_thinking && family != ChatFamily::kQwen3) {
    throw base::ConfigError(fmt::format("chat template '{}' has no enable_thinking switch (qwen3's has)", chat_family_name(family)));
  }
  if (messages.empty()) throw base::ConfigError("chat prompt: no messages");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& role = messages[i].role;
    if (role == "system" && i == 0) continue;
    if (role != "user" && role != "assistant") {
      throw base::ConfigError(fmt::format("chat prompt: message {}: role '{}' {}", i, role,
                                          role == "system" ? "comes only first" : "is not served (system, user or assistant)"));
    }
  }
  if (messages.back().role != "user") {
    throw base::ConfigError(fmt::format("chat prompt: message {}: the last message is the {}'s; a reply follows a user message",
                                        messages.size() - 1, messages.back().role));
  }
  switch (family) {
    case ChatFamily::kQwen2:
      return render_qwen2(messages, "You are a helpful assistant.");
    case ChatFamily::kQwen2_5:
      return render_qwen2(messages, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
    case ChatFamily::kQwen3:
      return render_qwen3(messages, enable_thinking);
    case ChatFamily::kLlama3:
      return render_llama3(messages);
    case ChatFamily::kLlama3_1:
      return render_llama3_1(messages);
  }
  throw base::ConfigError("unknown chat family");
}

std::string render_chat_prompt(ChatFamily family, const ChatPrompt& prompt) {
  std::vector<ChatMessage> messages;
  if (prompt.system) messages.push_back({"system", *prompt.system});
  messages.push_back({"user", prompt.user});
  return render_chat_messages(family, messages, prompt.enable_thinking);
}

const char* chat_end_of_turn(ChatFamily family) {
  switch (family) {
    case ChatFamily::kQwen2:
    case ChatFamily::kQwen2_5:
    case ChatFamily::kQwen3:
      return "<|im_end|>";
    case ChatFamily::kLlama3:
    case ChatFamily::kLlama3_1:
      return "<|eot_id|>";
  }
  return "";
}

}  // namespace april::hf
