#include "adapters/live/detail/hf_checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "base/atomic_file.hpp"
#include "base/config.hpp"
#include "base/json_file.hpp"

namespace april::live {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& where, const std::string& why) { throw base::ConfigError(fmt::format("{}: {}", where, why)); }

torch::ScalarType torch_dtype(StDtype t) {
  switch (t) {
    case StDtype::F64:
      return torch::kFloat64;
    case StDtype::F32:
      return torch::kFloat32;
    case StDtype::F16:
      return torch::kFloat16;
    case StDtype::BF16:
      return torch::kBFloat16;
    default:
      return torch::kFloat32;
  }
}

// The files holding the weights: the shards an index names, or the one file.
std::vector<std::string> weight_files(const std::string& dir, std::map<std::string, std::string>* index_map) {
  const auto index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(index)) {
    const auto f = base::read_json_file(index.string(), "checkpoint index");
    const auto it = f.doc.find("weight_map");
    if (it == f.doc.end() || !it->is_object()) refuse(f.where("weight_map"), "missing or not an object of tensor -> file");
    std::set<std::string> files;
    for (const auto& [name, file] : it->items()) {
      if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
        refuse(f.where("weight_map"), fmt::format("tensor '{}': expected a file name in this folder", name));
      }
      (*index_map)[name] = file.get<std::string>();
      files.insert(file.get<std::string>());
    }
    std::vector<std::string> out;
    for (const auto& file : files) out.push_back((fs::path(dir) / file).string());
    return out;
  }
  const auto single = fs::path(dir) / "model.safetensors";
  if (fs::exists(single)) return {single.string()};
  std::string also;
  if (fs::exists(fs::path(dir) / "pytorch_model.bin") || fs::exists(fs::path(dir) / "pytorch_model.bin.index.json")) {
    also = " (pytorch_model.bin is not read: pickled files can run code; convert the checkpoint to safetensors)";
  }
  refuse(dir, fmt::format("no model.safetensors or model.safetensors.index.json{}", also));
}

// Copies a mapped tensor into `dest` (any dtype, any device) a slice of
// rows at a time, dropping each slice's pages once copied: the process holds
// the model plus one slice of the file, not the model twice. Read in place
// where the data is aligned for its type (as save_pretrained writes it),
// through a copy where not.
void copy_in(const SafetensorsFile& file, const StTensor& t, torch::Tensor dest) {
  constexpr std::size_t kSliceBytes = 32u << 20;
  const auto dtype = torch_dtype(t.dtype);
  const auto shape = dest.sizes().vec();
  const std::int64_t rows = shape.empty() ? 1 : shape[0];
  if (rows == 0) return;
  const std::size_t row_bytes = t.bytes / static_cast<std::size_t>(rows);
  const auto step = static_cast<std::int64_t>(std::max<std::size_t>(1, kSliceBytes / std::max<std::size_t>(1, row_bytes)));
  const bool aligned = reinterpret_cast<std::uintptr_t>(t.data) % element_bytes(t.dtype) == 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += step) {
    const auto n = std::min(step, rows - r0);
    const std::byte* src = t.data + static_cast<std::size_t>(r0) * row_bytes;
    const std::size_t bytes = static_cast<std::size_t>(n) * row_bytes;
    auto slice_shape = shape;
    if (!slice_shape.empty()) slice_shape[0] = n;
    torch::Tensor from;
    if (aligned) {
      // Never written: the mapping is read-only and copy_ only reads it.
      from = torch::from_blob(const_cast<std::byte*>(src), slice_shape, torch::TensorOptions().dtype(dtype));
    } else {
      from = torch::empty(slice_shape, torch::TensorOptions().dtype(dtype));
      std::memcpy(from.data_ptr(), src, bytes);
    }
    (shape.empty() ? dest : dest.narrow(0, r0, n)).copy_(from);
    file.release(src, bytes);
  }
}

}  // namespace

std::string hf_tensor_name(const std::string& ours) {
  static const std::map<std::string, std::string> kBlock = {{"norm1", "input_layernorm"},   {"norm2", "post_attention_layernorm"},
                                                            {"wq", "self_attn.q_proj"},     {"wk", "self_attn.k_proj"},
                                                            {"wv", "self_attn.v_proj"},     {"wo", "self_attn.o_proj"},
                                                            {"q_norm", "self_attn.q_norm"}, {"k_norm", "self_attn.k_norm"},
                                                            {"w_gate", "mlp.gate_proj"},    {"w_up", "mlp.up_proj"},
                                                            {"w_down", "mlp.down_proj"}};
  if (ours == "embed.weight") return "model.embed_tokens.weight";
  if (ours == "norm.weight") return "model.norm.weight";
  if (ours == "lm_head.weight") return "lm_head.weight";
  if (ours.rfind("block", 0) == 0) {
    const auto dot = ours.find('.');
    const auto last = ours.rfind('.');
    const auto it = kBlock.find(ours.substr(dot + 1, last - dot - 1));
    if (dot != std::string::npos && it != kBlock.end()) {
      return fmt::format("model.layers.{}.{}.{}", ours.substr(5, dot - 5), it->second, ours.substr(last + 1));
    }
  }
  throw std::logic_error("no Hugging Face name for the live transformer's parameter '" + ours + "'");
}

HfCheckpoint load_hf_checkpoint(const std::string& dir, std::int64_t max_seq, const torch::Device& device, torch::ScalarType dtype) {
  HfCheckpoint out;
  out.config = read_hf_config(dir);
  auto cfg = out.config.model;
  cfg.max_seq = max_seq;
  std::map<std::string, std::string> index_map;
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  std::map<std::string, std::pair<const SafetensorsFile*, const StTensor*>> found;
  for (const auto& path : weight_files(dir, &index_map)) {
    files.push_back(std::make_unique<SafetensorsFile>(path));
    out.file_bytes += static_cast<std::int64_t>(fs::file_size(path));
    for (const auto& t : files.back()->tensors()) {
      if (!found.emplace(t.name, std::make_pair(files.back().get(), &t)).second) {
        refuse(path, fmt::format("tensor '{}' is also in {}", t.name, found[t.name].first->path()));
      }
    }
  }
  // A config.json that describes a far larger model than the files hold
  // would have it built first (gigabytes for a small checkpoint): the counts
  // are compared before anything is allocated. Within twice the files, the
  // model is built and each tensor named that does not fit it.
  std::int64_t file_elements = 0;
  for (const auto& [name, where] : found) {
    std::int64_t n = 1;
    for (const auto d : where.second->shape) n *= d;
    if (!(cfg.tie_embeddings && name == "lm_head.weight")) file_elements += n;
  }
  if (cfg.parameters() > 2 * file_elements) {
    refuse((fs::path(dir) / "config.json").string(),
           fmt::format("describes a {} of {} parameters ({} layers, hidden {}, vocab {}), but the weight files hold {} values: "
                       "the config is not this checkpoint's",
                       cfg.architecture, cfg.parameters(), cfg.n_layers, cfg.d_model, cfg.vocab, file_elements));
  }
  torch::NoGradGuard no_grad;
  // Made in the engine's dtype and put in its place before the weights come
  // in, so that no float32 copy of a bf16 model is held beside it.
  out.model = Transformer(cfg, dtype);
  out.model->to(device, dtype);

  std::map<StDtype, int> dtypes;
  std::set<std::string> used;
  for (auto& p : out.model->named_parameters()) {
    const auto name = hf_tensor_name(p.key());
    const auto it = found.find(name);
    if (it == found.end()) refuse(dir, fmt::format("tensor '{}' ({} needs it) is in none of the weight files", name, cfg.architecture));
    const auto& [file, t] = it->second;
    const auto want = p.value().sizes().vec();
    if (t->shape != want) {
      refuse(file->path(),
             fmt::format("tensor '{}' has shape [{}], the config makes it [{}]", name, fmt::join(t->shape, ", "), fmt::join(want, ", ")));
    }
    if (t->dtype != StDtype::F32 && t->dtype != StDtype::BF16 && t->dtype != StDtype::F16) {
      refuse(file->path(), fmt::format("tensor '{}' is {}; weights are read from F32, BF16 or F16", name, to_string(t->dtype)));
    }
    copy_in(*file, *t, p.value());
    ++dtypes[t->dtype];
    used.insert(name);
  }
  // Tied models: transformers writes no lm_head.weight; where one is there
  // anyway, it must be the embedding, or the checkpoint means something else.
  if (cfg.tie_embeddings) {
    if (const auto it = found.find("lm_head.weight"); it != found.end()) {
      const auto* e = found.at("model.embed_tokens.weight").second;
      const auto* h = it->second.second;
      if (h->bytes != e->bytes || h->dtype != e->dtype || std::memcmp(h->data, e->data, h->bytes) != 0) {
        refuse(it->second.first->path(),
               "tensor 'lm_head.weight' differs from the embedding, but the config ties them (tie_word_embeddings)");
      }
      used.insert("lm_head.weight");
    }
  }
  for (const auto& [name, where] : found) {
    // Older Llama checkpoints store the rotary frequencies; they are recomputed from the config.
    if (used.count(name) == 0 && name.find("rotary_emb.inv_freq") == std::string::npos) {
      refuse(where.first->path(),
             fmt::format("tensor '{}' has no place in {} as the config describes it; it is not dropped silently", name, cfg.architecture));
    }
  }
  for (const auto& [name, file] : index_map) {
    const auto it = found.find(name);
    if (it == found.end() || fs::path(it->second.first->path()).filename() != file) {
      refuse((fs::path(dir) / "model.safetensors.index.json").string(),
             fmt::format("weight_map puts tensor '{}' in {}, which does not hold it", name, file));
    }
  }
  out.file_dtype = std::max_element(dtypes.begin(), dtypes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  return out;
}

void save_hf_checkpoint(Transformer& model, const std::string& source_dir, const std::string& out_dir, const HfSaveOptions& options) {
  torch::NoGradGuard no_grad;
  struct Pending {
    std::string name;
    torch::Tensor host;
  };
  std::vector<Pending> all;
  for (const auto& p : model->named_parameters()) {
    all.push_back({hf_tensor_name(p.key()), p.value().detach().to(torch::kCPU, torch_dtype(options.dtype)).contiguous()});
  }
  std::sort(all.begin(), all.end(), [](const Pending& a, const Pending& b) { return a.name < b.name; });
  // Shards in name order, each up to max_shard_bytes (a tensor larger than that alone in its shard).
  std::vector<std::vector<const Pending*>> shards(1);
  std::int64_t in_shard = 0, total = 0;
  for (const auto& p : all) {
    const auto bytes = static_cast<std::int64_t>(p.host.nbytes());
    if (!shards.back().empty() && in_shard + bytes > options.max_shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(&p);
    in_shard += bytes;
    total += bytes;
  }
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto file =
        shards.size() == 1 ? std::string("model.safetensors") : fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
    std::vector<StTensorOut> tensors;
    for (const auto* p : shards[i]) {
      tensors.push_back({p->name, options.dtype, p->host.sizes().vec(), p->host.data_ptr(), p->host.nbytes()});
      weight_map[p->name] = file;
    }
    write_safetensors((fs::path(out_dir) / file).string(), tensors, metadata);
  }
  if (shards.size() > 1) {
    const nlohmann::ordered_json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
    base::write_file_atomically((fs::path(out_dir) / "model.safetensors.index.json").string(), index.dump(2) + "\n");
  }
  // What a server needs beside the weights, as the source has it (already
  // there when the weights are written into their source folder).
  if (fs::equivalent(source_dir, out_dir)) return;
  for (const char* name : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                           "vocab.json", "merges.txt", "added_tokens.json", "chat_template.jinja"}) {
    const auto from = fs::path(source_dir) / name;
    if (fs::exists(from)) fs::copy_file(from, fs::path(out_dir) / name);
  }
}

}  // namespace april::live
