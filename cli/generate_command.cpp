// `april generate`: one prompt through a Hugging Face checkpoint on the live
// engine's transformer, printing the tokens and their log-probabilities.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "adapters/live/generate.hpp"
#include "base/config.hpp"
#include "base/integer_text.hpp"
#include "cli/cli_options.hpp"
#include "cli/commands.hpp"
#include "hf/chat_template.hpp"
#include "hf/tokenizer.hpp"

namespace april::cli {
namespace po = boost::program_options;

namespace {

// "1,2,3" -> ids, each read as --set reads integers; an empty item is refused.
std::vector<std::int64_t> parse_ids(const std::string& text) {
  std::vector<std::int64_t> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw std::invalid_argument(fmt::format("--prompt-ids '{}': an empty item (expected ids like 1,2,3)", text));
    const auto v = base::read_integer(item);
    if (const auto* why = std::get_if<std::string>(&v)) throw std::invalid_argument(fmt::format("--prompt-ids: '{}' {}", item, *why));
    ids.push_back(std::get<std::int64_t>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

// The generated text, or nullopt when an id has no token (a model's
// vocabulary is often padded past its tokenizer's, and an untrained model
// may pick such an id): no text is made up for it.
std::optional<std::string> decoded(const hf::Tokenizer& t, const std::vector<std::int64_t>& ids) {
  std::vector<hf::TokenId> narrow;
  for (const auto id : ids) {
    if (id >= t.id_count()) return std::nullopt;
    narrow.push_back(static_cast<hf::TokenId>(id));
  }
  return t.decode(narrow);
}

}  // namespace

int generate_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: april generate --checkpoint DIR (--prompt TEXT [--chat FAMILY] | --prompt-ids 1,2,3) [--max-new-tokens N]\n"
      "                      [--greedy] [--json] [--temperature T] [--seed S] [--device cpu|cuda] [--dtype float32|bfloat16]\n"
      "                      [--ignore-eos]\n"
      "Runs one prompt through a Hugging Face checkpoint (a folder with config.json and model.safetensors, or\n"
      "shards with model.safetensors.index.json; Qwen3ForCausalLM, Qwen2ForCausalLM, LlamaForCausalLM) on the\n"
      "live engine's transformer: prefill, then one decode step per token against the KV cache. Prints the\n"
      "generated ids and the natural-log probability of each under the model (softmax at temperature 1);\n"
      "--json prints {\"output_ids\": [...], \"output_logprobs\": [...], \"finish_reason\": \"length\"|\"eos\"}, and \"text\"\n"
      "when the folder has a tokenizer.json. --prompt encodes TEXT with that tokenizer (byte-level BPE as Qwen2/Qwen3\n"
      "and Llama 3 ship it); --chat wraps it in a family's chat template first (qwen2, qwen2.5, qwen3, llama3,\n"
      "llama3.1). Generation stops at the config's eos_token_id unless --ignore-eos.\n\noptions");
  live::GenerateRequest r;
  std::string ids_text, prompt_text, chat;
  bool json = false, ignore_eos = false;
  std::int64_t max_new = 32, seed = 0;
  opts.add_options()("help,h", "show this help")("checkpoint", po::value(&r.checkpoint_dir)->required(),
                                                 "the Hugging Face checkpoint folder")("prompt", po::value(&prompt_text),
                                                                                       "the prompt as text (needs DIR/tokenizer.json)")(
      "chat", po::value(&chat), "wrap --prompt in this family's chat template, as a user turn")(
      "prompt-ids", po::value(&ids_text), "the prompt as token ids, comma-separated")("max-new-tokens", integer_option(&max_new, 32),
                                                                                      "tokens to generate at most (default 32)")(
      "greedy", po::bool_switch(&r.greedy), "take the most likely token at each step (default: sample)")(
      "temperature", po::value(&r.temperature)->default_value(1.0), "sampling temperature")(
      "seed", integer_option(&seed, 0), "sampling seed")("device", po::value(&r.device)->default_value("cpu"), "cpu or cuda")(
      "dtype", po::value(&r.dtype)->default_value("float32"), "the engine's dtype: float32 or bfloat16")(
      "ignore-eos", po::bool_switch(&ignore_eos), "generate max-new-tokens even past an end-of-sequence token")(
      "json", po::bool_switch(&json), "print JSON");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  if (vm.count("prompt") == vm.count("prompt-ids"))
    throw std::invalid_argument("give the prompt as --prompt TEXT or as --prompt-ids, one of them");
  if (!chat.empty() && !vm.count("prompt")) throw std::invalid_argument("--chat wraps --prompt TEXT; it does not apply to --prompt-ids");
  const auto tokenizer_path = (std::filesystem::path(r.checkpoint_dir) / "tokenizer.json").string();
  std::optional<hf::Tokenizer> tokenizer;
  if (std::filesystem::exists(tokenizer_path)) tokenizer = hf::Tokenizer::load(tokenizer_path);
  if (vm.count("prompt")) {
    if (!tokenizer)
      throw std::invalid_argument(fmt::format("--prompt needs a tokenizer: {} is missing (or give --prompt-ids)", tokenizer_path));
    const auto text =
        chat.empty() ? prompt_text : hf::render_chat_prompt(hf::chat_family_from_name(chat), hf::ChatPrompt{prompt_text, {}, {}});
    for (const auto id : tokenizer->encode(text)) r.prompt_ids.push_back(id);
  } else {
    r.prompt_ids = parse_ids(ids_text);
  }
  r.max_new_tokens = max_new;
  r.seed = static_cast<std::uint64_t>(seed);
  r.stop_at_eos = !ignore_eos;
  const auto g = live::generate(r);
  if (json) {
    nlohmann::ordered_json j = {{"output_ids", g.output_ids}, {"output_logprobs", g.output_logprobs}, {"finish_reason", g.finish_reason}};
    if (tokenizer) {
      if (const auto text = decoded(*tokenizer, g.output_ids)) j["text"] = *text;
    }
    std::fputs((j.dump() + "\n").c_str(), stdout);
    return 0;
  }
  const double decode_tok_s = g.decode_s > 0 ? static_cast<double>(g.output_ids.size() - 1) / g.decode_s : 0;
  std::fputs(fmt::format("{} ({:.2f}M parameters) loaded in {:.2f} s; {} prompt tokens, {} generated ({}), prefill {:.3f} s, "
                         "decode {:.1f} tok/s\n",
                         g.architecture, static_cast<double>(g.parameters) / 1e6, g.load_s, r.prompt_ids.size(), g.output_ids.size(),
                         g.finish_reason, g.prefill_s, decode_tok_s)
                 .c_str(),
             stdout);
  std::fputs(fmt::format("output_ids: {}\n", fmt::join(g.output_ids, ",")).c_str(), stdout);
  std::string lps;
  for (const auto lp : g.output_logprobs) lps += fmt::format("{}{:.4f}", lps.empty() ? "" : ",", lp);
  std::fputs(fmt::format("output_logprobs: {}\n", lps).c_str(), stdout);
  if (tokenizer) {
    const auto text = decoded(*tokenizer, g.output_ids);
    std::fputs(
        (text ? fmt::format("text: {}\n", nlohmann::json(*text).dump()) : std::string("text: (an id past the tokenizer's vocabulary)\n"))
            .c_str(),
        stdout);
  }
  return 0;
}

}  // namespace april::cli
