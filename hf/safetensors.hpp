#pragma once
// The safetensors format (huggingface/safetensors, docs "Format"): an 8-byte
// little-endian header length N, N bytes of JSON naming each tensor's dtype,
// shape and [begin, end) byte range, then the data. Read memory-mapped, with
// every range and size checked before a byte of data is touched; written as
// Hugging Face's loaders expect. Plain C++: no torch.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace april::live {

enum class StDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };
std::size_t element_bytes(StDtype t);
std::string to_string(StDtype t);  // as the format writes it: "BF16"

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<std::int64_t> shape;
  const std::byte* data = nullptr;  // not aligned: copy out with memcpy
  std::size_t bytes = 0;

  [[nodiscard]] std::int64_t numel() const;
};

// The tensors a whole safetensors file's bytes hold (their data pointing into
// `bytes`), with every check below; `path` names it in errors. What the
// mapped reader runs, and what the fuzzer drives.
std::vector<StTensor> parse_safetensors(const std::byte* bytes, std::size_t size, const std::string& path,
                                        std::map<std::string, std::string>* metadata);

// One file, mapped read-only. Throws base::ConfigError naming the file (and
// the tensor) on a short file, a header past the file or over 100 MiB,
// invalid JSON, an unknown dtype, a shape whose size disagrees with its byte
// range, or ranges outside the data or overlapping.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(std::string path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::vector<StTensor>& tensors() const { return tensors_; }  // in file order
  [[nodiscard]] const StTensor* find(const std::string& name) const;
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Drops the tensor's pages from this process's memory once it has been
  // copied out (they stay in the page cache), so that loading a model holds
  // one copy of it, not two.
  void release(const StTensor& t) const { release(t.data, t.bytes); }
  void release(const std::byte* data, std::size_t bytes) const;

 private:
  std::string path_;
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::vector<StTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A tensor to write: its bytes, little-endian, row-major.
struct StTensorOut {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// Writes `tensors` (in the order given) to `path`, which must not exist (a
// checkpoint is assembled in a fresh folder and put in place whole). The
// header is padded with spaces to a multiple of 8 bytes, so that every
// tensor's data is 8-byte aligned in the file when their sizes are.
void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace april::live
