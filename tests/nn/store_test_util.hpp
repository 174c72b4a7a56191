// Helpers of the ember::store tests: a scratch directory, whole-file I/O, a minimal zip
// writer (stored entries) and a pickle byte builder, to craft damaged or unusual PyTorch
// archives in the tests themselves.
#pragma once

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "ember/store/tensors.hpp"
#include "fixtures.hpp"

namespace ember::test::store {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

inline fs::path fixture_path(const std::string& name) {
  return fs::path(EMBER_NN_FIXTURE_DIR) / name;
}

/// A fresh empty directory, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("ember_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }
  /// Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

inline Bytes read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const fs::path& p, const Bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::uint32_t crc32(const Bytes& b) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (auto x : b) c = table[(c ^ x) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

/// A zip archive of uncompressed ("stored") entries, in the given order.
inline Bytes make_zip(const std::vector<std::pair<std::string, Bytes>>& entries) {
  Bytes out;
  Bytes central;
  auto put = [](Bytes& b, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (const auto& [name, data] : entries) {
    const auto offset = out.size();
    const auto crc = crc32(data);
    put(out, 0x04034b50, 4);  // local file header
    put(out, 20, 2);          // version needed
    put(out, 0, 2);           // flags
    put(out, 0, 2);           // method: stored
    put(out, 0, 4);           // time, date
    put(out, crc, 4);
    put(out, data.size(), 4);
    put(out, data.size(), 4);
    put(out, name.size(), 2);
    put(out, 0, 2);  // extra length
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());

    put(central, 0x02014b50, 4);  // central directory header
    put(central, 20, 2);          // version made by
    put(central, 20, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, data.size(), 4);
    put(central, data.size(), 4);
    put(central, name.size(), 2);
    put(central, 0, 2);  // extra
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, offset, 4);
    central.insert(central.end(), name.begin(), name.end());
  }
  const auto cd_offset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, 0x06054b50, 4);  // end of central directory
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, entries.size(), 2);
  put(out, entries.size(), 2);
  put(out, central.size(), 4);
  put(out, cd_offset, 4);
  put(out, 0, 2);
  return out;
}

/// Builds pickle bytes opcode by opcode (protocol 2 encodings unless noted).
class Pickle {
 public:
  Pickle& op(std::uint8_t c) {
    b_.push_back(c);
    return *this;
  }
  Pickle& raw(const Bytes& b) {
    b_.insert(b_.end(), b.begin(), b.end());
    return *this;
  }
  Pickle& proto(int v) { return op(0x80).op(static_cast<std::uint8_t>(v)); }
  Pickle& mark() { return op('('); }
  Pickle& str(const std::string& s) {
    op('X');
    le(s.size(), 4);
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  Pickle& integer(std::int64_t v) {
    if (v >= 0 && v < 256) return op('K').op(static_cast<std::uint8_t>(v));
    op('J');
    le(static_cast<std::uint64_t>(v), 4);
    return *this;
  }
  Pickle& global(const std::string& module, const std::string& name) {
    op('c');
    b_.insert(b_.end(), module.begin(), module.end());
    op('\n');
    b_.insert(b_.end(), name.begin(), name.end());
    return op('\n');
  }
  Pickle& tuple() { return op('t'); }
  Pickle& empty_dict() { return op('}'); }
  Pickle& empty_tuple() { return op(')'); }
  Pickle& reduce() { return op('R'); }
  Pickle& setitems() { return op('u'); }
  Pickle& stop() { return op('.'); }
  /// _rebuild_tensor_v2(('storage', torch.<type>, key, 'cpu', numel), offset, size, stride,
  /// False, OrderedDict()).
  Pickle& tensor(const std::string& type, const std::string& key, std::int64_t numel,
                 std::int64_t offset, const std::vector<std::int64_t>& size,
                 const std::vector<std::int64_t>& stride) {
    global("torch._utils", "_rebuild_tensor_v2").mark();
    mark().str("storage").global("torch", type).str(key).str("cpu").integer(numel).tuple();
    op('Q').integer(offset);
    mark();
    for (auto s : size) integer(s);
    tuple().mark();
    for (auto s : stride) integer(s);
    tuple().op(0x89).global("collections", "OrderedDict").empty_tuple().reduce();
    return tuple().reduce();
  }
  const Bytes& bytes() const { return b_; }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  Bytes b_;
};

template <class T>
Bytes le_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

}  // namespace ember::test::store
