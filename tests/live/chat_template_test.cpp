// The chat templates (hf/chat_template): the exact text each
// family's Hugging Face template renders for one user prompt, with and
// without a system prompt, the generation prompt appended.
#include <gtest/gtest.h>

#include <string>

#include "base/config.hpp"
#include "hf/chat_template.hpp"

namespace april::hf {
namespace {

std::string render(const std::string& family, const std::string& user, std::optional<std::string> system = std::nullopt,
                   std::optional<bool> thinking = std::nullopt) {
  return render_chat_prompt(chat_family_from_name(family), ChatPrompt{user, std::move(system), thinking});
}

TEST(ChatTemplate, Qwen2AndQwen25WriteTheirDefaultSystemPrompts) {
  EXPECT_EQ(render("qwen2", "What is 2+2?"),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render("qwen2.5", "What is 2+2?"),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n");
  // A given system prompt replaces the default, untrimmed (the Qwen templates do not trim).
  EXPECT_EQ(render("qwen2.5", " x \n", "Please reason step by step, and put your final answer within \\boxed{}."),
            "<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n"
            "<|im_start|>user\n x \n<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Qwen3HasNoDefaultSystemAndAThinkingSwitch) {
  EXPECT_EQ(render("qwen3", "hi"), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render("qwen3", "hi", std::nullopt, true), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render("qwen3", "hi", "Be brief.", false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplate, Llama3TrimsAndWritesBeginOfText) {
  EXPECT_EQ(render("llama3", "  hi there\n"),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render("llama3", "hi", "\tBe brief. "),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  // Jinja's trim is Python's strip(): U+3000 and U+001F go, U+200B (not a space) stays.
  EXPECT_EQ(render("llama3", "\u3000\x1fhi\u200b"),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi\u200b<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama31AlwaysWritesItsDatedSystemBlock) {
  EXPECT_EQ(render("llama3.1", "hi"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render("llama3.1", "hi ", " Be brief."),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

// Conversations, as the templates quoted in chat_template.cpp render them:
// every turn in order; Qwen3 drops an earlier answer's reasoning.
TEST(ChatTemplate, ConversationsRenderEveryTurn) {
  const std::vector<ChatMessage> talk = {{"user", "2+2?"}, {"assistant", "<think>\nadd\n</think>\n\n4"}, {"user", "and 3+3?"}};
  EXPECT_EQ(render_chat_messages(ChatFamily::kQwen3, talk),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nand 3+3?<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render_chat_messages(ChatFamily::kQwen2, {{"user", "a"}, {"assistant", "b"}, {"user", "c"}}),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\na<|im_end|>\n"
            "<|im_start|>assistant\nb<|im_end|>\n<|im_start|>user\nc<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render_chat_messages(ChatFamily::kLlama3_1, {{"system", "S "}, {"user", " a"}, {"assistant", "b\n"}, {"user", "c"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\na<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nb<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nc<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  // One user message renders as render_chat_prompt does.
  EXPECT_EQ(render_chat_messages(ChatFamily::kLlama3, {{"system", "s"}, {"user", "u"}}), render("llama3", "u", "s"));
  EXPECT_THROW((void)render_chat_messages(ChatFamily::kQwen3, {{"user", "a"}, {"assistant", "b"}}), base::ConfigError);
  EXPECT_THROW((void)render_chat_messages(ChatFamily::kQwen3, {{"user", "a"}, {"system", "b"}, {"user", "c"}}), base::ConfigError);
  EXPECT_THROW((void)render_chat_messages(ChatFamily::kQwen3, {}), base::ConfigError);
}

TEST(ChatTemplate, OtherFamiliesAndSwitchesAreRefusedByName) {
  try {
    (void)chat_family_from_name("llama3.2");
    FAIL() << "llama3.2 was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_STREQ(e.what(), "chat template 'llama3.2' is not supported; april writes those of qwen2, qwen2.5, qwen3, llama3, llama3.1");
  }
  EXPECT_THROW((void)render("qwen2.5", "hi", std::nullopt, false), base::ConfigError);
  for (const std::string& name : chat_family_names()) EXPECT_EQ(chat_family_name(chat_family_from_name(name)), name);
}

}  // namespace
}  // namespace april::hf
