// safetensors reading (fully validated) and atomic writing.
#include "ember/store/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>

#include "atomic_file.hpp"
#include "ember/store/file.hpp"
#include "lazy.hpp"

static_assert(std::endian::native == std::endian::little,
              "ember::store writes tensor bytes as they are in memory: little-endian hosts only");

namespace ember::store {

namespace {

using ojson = nlohmann::ordered_json;

// Headers larger than this are refused (the reference implementation's limit).
constexpr std::uint64_t kMaxHeader = 100ull << 20;

struct DTypeName {
  DType dtype;
  std::string_view name;
};
constexpr std::array<DTypeName, 10> kDTypes{{{DType::F64, "F64"},
                                             {DType::F32, "F32"},
                                             {DType::F16, "F16"},
                                             {DType::BF16, "BF16"},
                                             {DType::I64, "I64"},
                                             {DType::I32, "I32"},
                                             {DType::I16, "I16"},
                                             {DType::I8, "I8"},
                                             {DType::U8, "U8"},
                                             {DType::Bool, "BOOL"}}};
// Defined by safetensors, absent from Ember.
constexpr std::array<std::string_view, 11> kForeignDTypes{
    "U16",     "U32",     "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0",
    "F6_E2M3", "F6_E3M2", "F4",  "C64",     "C128"};

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin;
  std::uint64_t end;
};

struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
};

template <class... Args>
[[noreturn]] void bad(std::string_view file, Args&&... args) {
  detail::fail<IoError>("read_safetensors", "'", file, "': ", std::forward<Args>(args)...);
}

std::uint64_t read_u64_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string json_type(const ojson& v) {
  if (v.is_number()) return "a number";
  const std::string name = v.type_name();
  return (name[0] == 'a' || name[0] == 'o' ? "an " : "a ") + name;
}

// Parses and validates the header text against a data buffer of `buffer_size` bytes.
Header parse_header(std::string_view text, std::uint64_t buffer_size, std::string_view file) {
  ojson j;
  // Keys seen per open object, to reject duplicated keys (the JSON parser keeps one).
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  auto on_event = [&](int, ojson::parse_event_t ev, ojson& parsed) {
    if (ev == ojson::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (ev == ojson::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (ev == ojson::parse_event_t::key && !open_objects.empty() && !duplicate) {
      auto k = parsed.get<std::string>();
      if (!open_objects.back().insert(k).second) duplicate = std::move(k);
    }
    return true;
  };
  try {
    j = ojson::parse(text.begin(), text.end(), on_event);
  } catch (const ojson::exception& e) {
    bad(file, "corrupt header: invalid JSON (", e.what(), ")");
  }
  if (duplicate) bad(file, "corrupt header: the key '", *duplicate, "' appears twice");
  if (!j.is_object()) bad(file, "corrupt header: expected a JSON object, found ", json_type(j));

  Header h;
  for (const auto& item : j.items()) {
    // Not a structured binding: clang 14 (emscripten) cannot capture those in lambdas.
    const std::string& key = item.key();
    const ojson& v = item.value();
    if (key == "__metadata__") {
      if (!v.is_object()) bad(file, "corrupt header: __metadata__ is ", json_type(v));
      for (const auto& [mk, mv] : v.items()) {
        if (!mv.is_string()) {
          bad(file, "corrupt header: __metadata__ value of '", mk, "' is ", json_type(mv),
              ", not a string");
        }
        h.metadata.emplace(mk, mv.get<std::string>());
      }
      continue;
    }
    if (!v.is_object()) bad(file, "corrupt header: tensor '", key, "' is ", json_type(v));
    const auto field = [&](const char* name) -> const ojson& {
      auto it = v.find(name);
      if (it == v.end()) bad(file, "corrupt header: tensor '", key, "' has no '", name, "'");
      return *it;
    };
    Entry e;
    e.name = key;
    const ojson& dt = field("dtype");
    if (!dt.is_string()) bad(file, "corrupt header: tensor '", key, "': dtype is ", json_type(dt));
    const auto dts = dt.get<std::string>();
    auto known = std::find_if(kDTypes.begin(), kDTypes.end(),
                              [&](const DTypeName& d) { return d.name == dts; });
    if (known == kDTypes.end()) {
      if (std::find(kForeignDTypes.begin(), kForeignDTypes.end(), dts) != kForeignDTypes.end()) {
        detail::fail<UnsupportedError>("read_safetensors", "'", file, "': tensor '", key,
                                       "' has dtype ", dts, ", which Ember does not support");
      }
      bad(file, "corrupt header: tensor '", key, "' has an unknown dtype '", dts, "'");
    }
    e.dtype = known->dtype;

    const ojson& shape = field("shape");
    if (!shape.is_array())
      bad(file, "corrupt header: tensor '", key, "': shape is ", json_type(shape));
    std::uint64_t numel = 1;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) {
        bad(file, "corrupt header: tensor '", key, "': shape ", shape.dump(),
            " has an entry that is not a non-negative integer");
      }
      const auto dim = d.get<std::uint64_t>();
      if (dim > (1ull << 62) || __builtin_mul_overflow(numel, dim, &numel) ||
          numel > (1ull << 62)) {
        bad(file, "corrupt header: tensor '", key, "': shape ", shape.dump(), " is too large");
      }
      e.shape.dims.push_back(static_cast<std::int64_t>(dim));
    }

    const ojson& off = field("data_offsets");
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned()) {
      bad(file, "corrupt header: tensor '", key, "': data_offsets ", off.dump(),
          " is not a pair of non-negative integers");
    }
    e.begin = off[0].get<std::uint64_t>();
    e.end = off[1].get<std::uint64_t>();
    if (e.end < e.begin) {
      bad(file, "corrupt header: tensor '", key, "': data_offsets [", e.begin, ", ", e.end,
          "] end before they begin");
    }
    std::uint64_t want = 0;
    if (__builtin_mul_overflow(numel, dtype_size(e.dtype), &want) || e.end - e.begin != want) {
      bad(file, "corrupt header: tensor '", key, "' spans ", e.end - e.begin, " bytes but shape ",
          e.shape, " of ", dts, " needs ", want);
    }
    h.entries.push_back(std::move(e));
  }

  // The byte ranges must tile [0, buffer_size) exactly.
  std::vector<std::size_t> order(h.entries.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = h.entries[a];
    const auto& y = h.entries[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  std::uint64_t expected = 0;
  const Entry* last = nullptr;
  for (auto i : order) {
    const auto& e = h.entries[i];
    if (e.begin < expected) {
      bad(file, "corrupt layout: tensors '", last->name, "' [", last->begin, ", ", last->end,
          ") and '", e.name, "' [", e.begin, ", ", e.end, ") overlap");
    }
    if (e.begin > expected) {
      bad(file, "corrupt layout: ", e.begin - expected, " unused bytes before tensor '", e.name,
          "' at offset ", e.begin);
    }
    expected = e.end;
    if (e.end > e.begin || last == nullptr) last = &e;
  }
  if (expected > buffer_size) {
    bad(file, "truncated: tensor '", last->name, "' ends at data offset ", expected,
        " but the data buffer has only ", buffer_size, " bytes");
  }
  if (expected < buffer_size) {
    bad(file, "corrupt layout: ", buffer_size - expected, " trailing bytes after the last tensor");
  }
  return h;
}

// Checks the 8-byte length field against the file size; returns the header length.
std::uint64_t check_prefix(const std::uint8_t* first8, std::uint64_t file_size,
                           std::string_view file) {
  const std::uint64_t n = read_u64_le(first8);
  if (n > file_size - 8) {
    bad(file, "truncated: the header length field says ", n, " bytes but only ", file_size - 8,
        " follow");
  }
  if (n > kMaxHeader) bad(file, "corrupt header: header length ", n, " exceeds 100 MiB");
  if (n < 2) bad(file, "corrupt header: header length ", n, " is too short for a JSON object");
  return n;
}

std::string header_json(const NamedTensors& t, std::uint64_t* data_size) {
  ojson j = ojson::object();
  std::set<std::string_view> names;
  const auto check_utf8 = [](const std::string& s, const char* what) {
    try {
      (void)ojson(s).dump();
    } catch (const ojson::exception&) {
      detail::fail<ValueError>("write_safetensors", what, " is not valid UTF-8");
    }
  };
  if (!t.metadata.empty()) {
    ojson meta = ojson::object();
    for (const auto& [k, v] : t.metadata) {
      check_utf8(k, "a metadata key");
      check_utf8(v, ("the metadata value of '" + k + "'").c_str());
      meta[k] = v;
    }
    j["__metadata__"] = std::move(meta);
  }
  std::uint64_t offset = 0;
  for (const auto& [name, data] : t.tensors) {
    if (name.empty()) detail::fail<ValueError>("write_safetensors", "a tensor has an empty name");
    if (name == "__metadata__") {
      detail::fail<ValueError>("write_safetensors",
                               "'__metadata__' is reserved, not a tensor name");
    }
    if (!names.insert(name).second) {
      detail::fail<ValueError>("write_safetensors", "the tensor name '", name, "' appears twice");
    }
    check_utf8(name, ("the tensor name '" + name + "'").c_str());
    const auto want = static_cast<std::uint64_t>(checked_numel("write_safetensors", data.shape())) *
                      dtype_size(data.dtype());
    if (data.bytes().size() != want) {
      detail::fail<ShapeError>("write_safetensors", "tensor '", name, "' holds ",
                               data.bytes().size(), " bytes but shape ", data.shape(), " of ",
                               data.dtype(), " needs ", want);
    }
    ojson e = ojson::object();
    e["dtype"] = safetensors_dtype(data.dtype());
    e["shape"] = data.shape().dims;
    e["data_offsets"] = {offset, offset + want};
    j[name] = std::move(e);
    offset += want;
  }
  *data_size = offset;
  std::string text = j.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

void put_u64_le(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

std::string_view safetensors_dtype(DType d) {
  for (const auto& e : kDTypes) {
    if (e.dtype == d) return e.name;
  }
  detail::fail<DTypeError>("safetensors_dtype", "invalid dtype value");
}

std::vector<std::uint8_t> serialize_safetensors(const NamedTensors& tensors) {
  std::uint64_t data_size = 0;
  const std::string header = header_json(tensors, &data_size);
  std::vector<std::uint8_t> out(8 + header.size() + data_size);
  put_u64_le(out.data(), header.size());
  std::memcpy(out.data() + 8, header.data(), header.size());
  std::size_t pos = 8 + header.size();
  for (const auto& [name, data] : tensors.tensors) {
    if (!data.bytes().empty())
      std::memcpy(out.data() + pos, data.bytes().data(), data.bytes().size());
    pos += data.bytes().size();
  }
  return out;
}

void write_safetensors(const std::filesystem::path& path, const NamedTensors& tensors) {
  std::uint64_t data_size = 0;
  const std::string header = header_json(tensors, &data_size);
  internal::AtomicFile file(path, "write_safetensors");
  std::uint8_t len[8];
  put_u64_le(len, header.size());
  file.write(len, 8);
  file.write(header.data(), header.size());
  for (const auto& [name, data] : tensors.tensors)
    file.write(data.bytes().data(), data.bytes().size());
  file.commit();
}

NamedTensors read_safetensors(std::span<const std::uint8_t> bytes, std::string_view name) {
  if (bytes.size() < 8) {
    bad(name, "truncated: ", bytes.size(), " bytes, fewer than the 8-byte header length");
  }
  const std::uint64_t n = check_prefix(bytes.data(), bytes.size(), name);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, n);
  const std::uint8_t* buffer = bytes.data() + 8 + n;
  Header h = parse_header(text, bytes.size() - 8 - n, name);
  NamedTensors out;
  out.metadata = std::move(h.metadata);
  out.tensors.reserve(h.entries.size());
  for (auto& e : h.entries) {
    std::vector<std::uint8_t> b(buffer + e.begin, buffer + e.end);
    out.tensors.emplace_back(std::move(e.name),
                             TensorData::from_bytes(std::move(b), std::move(e.shape), e.dtype));
  }
  return out;
}

namespace {

/// A whole file mapped read-only (pages populated ahead), unmapped on destruction. Tensors
/// are copied once from the page cache into their destination: no read buffer, no
/// zero-filled vector to read into (issue 19). A file truncated by another process while it
/// is mapped would raise SIGBUS, as with Python's safetensors, which maps files too.
class Mapping {
 public:
  explicit Mapping(const std::filesystem::path& path) : name_(path.string()) {
    // The "is a directory" / "cannot open" errors as every reader gives them.
    (void)open_for_reading(path, "read_safetensors");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) bad(name_, "cannot open: ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      bad(name_, "cannot open: the size cannot be determined: ", std::strerror(err));
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ < 8) {
      ::close(fd);
      bad(name_, "truncated: ", size_, " bytes, fewer than the 8-byte header length");
    }
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    const int map_errno = errno;
    ::close(fd);
    if (p == MAP_FAILED) bad(name_, "cannot open: mmap failed: ", std::strerror(map_errno));
    ::madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const std::uint8_t*>(p);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(const_cast<std::uint8_t*>(data_), size_); }

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A mapped safetensors file read tensor by tensor.
class LazySafetensors final : public internal::LazyTensors {
 public:
  explicit LazySafetensors(const std::filesystem::path& path) : map_(path) {
    const auto bytes = map_.bytes();
    const std::uint64_t n = check_prefix(bytes.data(), bytes.size(), map_.name());
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, n);
    data_ = bytes.data() + 8 + n;
    Header h = parse_header(text, bytes.size() - 8 - n, map_.name());
    metadata = std::move(h.metadata);
    ranges_.reserve(h.entries.size());
    for (auto& e : h.entries) {
      ranges_.emplace_back(e.begin, e.end);
      entries.push_back({std::move(e.name), e.dtype, std::move(e.shape)});
    }
  }

  void read(std::size_t i, TensorData& out) override {
    std::vector<std::uint8_t> b = std::move(out).into_bytes();
    b.assign(data_ + ranges_[i].first, data_ + ranges_[i].second);  // capacity reused
    out = TensorData::from_bytes(std::move(b), entries[i].shape, entries[i].dtype);
  }

 private:
  Mapping map_;
  const std::uint8_t* data_ = nullptr;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;
};

}  // namespace

NamedTensors read_safetensors(const std::filesystem::path& path) {
  const Mapping map(path);
  return read_safetensors(map.bytes(), map.name());
}

namespace internal {
std::unique_ptr<LazyTensors> open_safetensors_lazy(const std::filesystem::path& path) {
  return std::make_unique<LazySafetensors>(path);
}
}  // namespace internal

}  // namespace ember::store
