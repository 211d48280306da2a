#pragma once
// The chat templates of the model families the tokenizer supports, written
// out for one user prompt (and an optional system prompt) with the
// generation prompt appended: what Hugging Face's
//   tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
// renders from each family's tokenizer_config.json, for exactly those
// messages. Tokenize the result with Tokenizer::encode (special tokens in it
// become their ids, and nothing is prepended: the Llama templates write
// <|begin_of_text|> themselves). Other families are refused by name.
#include <optional>
#include <string>
#include <vector>

namespace april::hf {

enum class ChatFamily {
  kQwen2,    // Qwen2-*-Instruct
  kQwen2_5,  // Qwen2.5-*-Instruct (and its Math/Coder variants when a system prompt is given)
  kQwen3,    // Qwen3-*
  kLlama3,   // Meta-Llama-3-*-Instruct
  kLlama3_1  // Llama-3.1-*-Instruct and Llama-3.3-70B-Instruct
};

// "qwen2", "qwen2.5", "qwen3", "llama3", "llama3.1"; anything else is refused
// (base::ConfigError) naming it and these.
ChatFamily chat_family_from_name(const std::string& name);
const char* chat_family_name(ChatFamily family);
std::vector<std::string> chat_family_names();

struct ChatPrompt {
  std::string user;
  std::optional<std::string> system;  // nullopt: the template's default (Qwen2, Qwen2.5) or none
  // Qwen3 only: false renders enable_thinking=False (an empty think block
  // after the assistant header). Set for another family: refused.
  std::optional<bool> enable_thinking;
};

// One message of a conversation: role "system" (first only), "user" or
// "assistant", and its text.
struct ChatMessage {
  std::string role;
  std::string content;
};

// The prompt text of a conversation for `family`, as
// apply_chat_template(messages, add_generation_prompt=True) renders it: an
// optional system message first, then user and assistant messages, the
// last a user's. Qwen3 drops an earlier assistant answer's reasoning (up to
// its last "</think>"), as its template does. Anything else (another role,
// a system message later, a last message not a user's) is refused with
// base::ConfigError naming the message's index.
std::string render_chat_messages(ChatFamily family, const std::vector<ChatMessage>& messages,
                                 std::optional<bool> enable_thinking = std::nullopt);

// The token that ends an assistant turn in `family`'s template
// ("<|im_end|>" for the Qwen families, "<|eot_id|>" for Llama 3): where a
// generated answer stops, whatever the config's eos_token_id says (a base
// model's config often names only "<|endoftext|>").
const char* chat_end_of_turn(ChatFamily family);

// The prompt text for `family` (throws base::ConfigError for an
// enable_thinking the family's template does not read).
std::string render_chat_prompt(ChatFamily family, const ChatPrompt& prompt);

}  // namespace april::hf
