#include "hf/safetensors.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "base/config.hpp"
#include "base/json_value.hpp"

namespace april::live {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; this reader maps it as is");

// The format's own limit on the header (safetensors' N_MAX is 100 MB).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeName {
  const char* name;
  StDtype dtype;
  std::size_t bytes;
};
constexpr DtypeName kDtypes[] = {{"F64", StDtype::F64, 8}, {"F32", StDtype::F32, 4},  {"F16", StDtype::F16, 2}, {"BF16", StDtype::BF16, 2},
                                 {"I64", StDtype::I64, 8}, {"I32", StDtype::I32, 4},  {"I16", StDtype::I16, 2}, {"I8", StDtype::I8, 1},
                                 {"U8", StDtype::U8, 1},   {"BOOL", StDtype::BOOL, 1}};

[[noreturn]] void refuse(const std::string& path, const std::string& why) { throw base::ConfigError(fmt::format("{}: {}", path, why)); }

}  // namespace

std::size_t element_bytes(StDtype t) {
  for (const auto& d : kDtypes) {
    if (d.dtype == t) return d.bytes;
  }
  return 0;
}

std::string to_string(StDtype t) {
  for (const auto& d : kDtypes) {
    if (d.dtype == t) return d.name;
  }
  return "?";
}

std::int64_t StTensor::numel() const {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

std::vector<StTensor> parse_safetensors(const std::byte* bytes, std::size_t size, const std::string& path,
                                        std::map<std::string, std::string>* metadata) {
  std::vector<StTensor> tensors;
  if (size < 8) refuse(path, fmt::format("{} bytes: too short for a safetensors file (an 8-byte header length first)", size));
  const auto* base = bytes;
  std::uint64_t n = 0;
  std::memcpy(&n, base, 8);
  if (n > kMaxHeaderBytes) refuse(path, fmt::format("header of {} bytes, over the format's limit of {}", n, kMaxHeaderBytes));
  if (n > size - 8) refuse(path, fmt::format("header of {} bytes runs past the end of the {}-byte file", n, size));
  const std::string text(reinterpret_cast<const char*>(base + 8), static_cast<std::size_t>(n));
  nlohmann::json doc;
  if (const auto err = base::parse_json(text, doc))
    refuse(path, fmt::format("header: invalid JSON at byte {} ({})", err->byte + 8, err->reason));
  if (!doc.is_object()) refuse(path, "header: not a JSON object");
  const base::JsonValue root(doc, path);
  const std::size_t data_start = 8 + static_cast<std::size_t>(n);
  const std::size_t data_size = size - data_start;
  for (const auto& [name, entry] : doc.items()) {
    const base::JsonValue e = root.at(name);
    if (name == "__metadata__") {
      if (!entry.is_object()) e.fail("expected an object of strings");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) e.at(k).fail("expected a string");
        if (metadata != nullptr) (*metadata)[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) e.fail("expected {dtype, shape, data_offsets}");
    e.only_keys({"dtype", "shape", "data_offsets"});
    StTensor t;
    t.name = name;
    const auto dtype = e.at("dtype").string();
    const auto* d = std::find_if(std::begin(kDtypes), std::end(kDtypes), [&](const DtypeName& x) { return dtype == x.name; });
    if (d == std::end(kDtypes))
      e.at("dtype").fail(fmt::format("'{}' is not read (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)", dtype));
    t.dtype = d->dtype;
    t.shape = e.at("shape").integers(0, std::numeric_limits<std::int64_t>::max());
    std::uint64_t numel = 1;
    for (const auto dim : t.shape) {
      if (dim != 0 && numel > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(dim) / d->bytes) {
        e.at("shape").fail("more elements than any file holds");
      }
      numel *= static_cast<std::uint64_t>(dim);
    }
    const auto offsets = e.at("data_offsets").integers(0, std::numeric_limits<std::int64_t>::max());
    if (offsets.size() != 2 || offsets[0] > offsets[1]) e.at("data_offsets").fail("expected [begin, end] with begin <= end");
    const auto begin = static_cast<std::uint64_t>(offsets[0]), end = static_cast<std::uint64_t>(offsets[1]);
    if (end > data_size) e.at("data_offsets").fail(fmt::format("ends at byte {} of a {}-byte data section", end, data_size));
    if (end - begin != numel * d->bytes) {
      e.at("data_offsets")
          .fail(fmt::format("{} bytes for shape [{}] of {} ({} expected)", end - begin, fmt::join(t.shape, ", "), dtype, numel * d->bytes));
    }
    t.data = base + data_start + begin;
    t.bytes = static_cast<std::size_t>(end - begin);
    tensors.push_back(std::move(t));
  }
  std::sort(tensors.begin(), tensors.end(), [](const StTensor& a, const StTensor& b) { return a.data < b.data; });
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i - 1].data + tensors[i - 1].bytes > tensors[i].data) {
      refuse(path, fmt::format("tensors '{}' and '{}' overlap", tensors[i - 1].name, tensors[i].name));
    }
  }
  return tensors;
}

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)) {
  // O_NONBLOCK: a FIFO (or a device) of this name would block the open
  // until somebody writes to it; opened at once, it is refused below.
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) refuse(path_, fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(path_, "not a regular file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    refuse(path_, fmt::format("{} bytes: too short for a safetensors file (an 8-byte header length first)", size_));
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    refuse(path_, fmt::format("cannot map: {}", std::strerror(errno)));
  }
  try {
    tensors_ = parse_safetensors(static_cast<const std::byte*>(map_), size_, path_, &metadata_);
  } catch (...) {
    ::munmap(map_, size_);
    map_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      map_(other.map_),
      size_(other.size_),
      tensors_(std::move(other.tensors_)),
      metadata_(std::move(other.metadata_)) {
  other.map_ = nullptr;
  other.size_ = 0;
}

const StTensor* SafetensorsFile::find(const std::string& name) const {
  for (const auto& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void SafetensorsFile::release(const std::byte* data, std::size_t bytes) const {
  if (map_ == nullptr || bytes == 0) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const auto end = begin + bytes;
  // Whole pages inside the range only: a page shared with a neighbour may still be wanted.
  const auto first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::uint64_t numel = 1;
    for (const auto d : t.shape) numel *= static_cast<std::uint64_t>(d);
    if (numel * element_bytes(t.dtype) != t.bytes) {
      throw std::logic_error(
          fmt::format("{}: tensor '{}' has {} bytes for its shape's {}", path, t.name, t.bytes, numel * element_bytes(t.dtype)));
    }
    header[t.name] = {{"dtype", to_string(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  const auto put = [&](const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        const int err = errno;
        ::close(fd);
        throw std::runtime_error(fmt::format("{}: write failed: {}", path, std::strerror(err)));
      }
      c += w;
      n -= static_cast<std::size_t>(w);
    }
  };
  const std::uint64_t n = text.size();
  put(&n, 8);
  put(text.data(), text.size());
  for (const auto& t : tensors) put(t.data, t.bytes);
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(fmt::format("{}: flush to disk failed: {}", path, std::strerror(err)));
  }
  if (::close(fd) != 0) throw std::runtime_error(fmt::format("{}: close failed: {}", path, std::strerror(errno)));
}

}  // namespace april::live
