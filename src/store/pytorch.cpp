// read_pytorch: torch.save zip archives -> NamedTensors (see pytorch.hpp).
#include "ember/store/pytorch.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "ember/store/file.hpp"
#include "lazy.hpp"
#include "pickle.hpp"
#include "pytorch_zip.hpp"

namespace ember::store {

namespace {

using internal::PyKind;
using internal::PyObject;
using internal::PyRef;
using internal::StorageRef;
using internal::TensorRef;

constexpr const char* kOp = "read_pytorch";
constexpr int kMaxDepth = 64;
// Work bounds of flattening. A pickle can reference one memoized object from many places
// (l1 = [l0, l0], l2 = [l1, l1], ...), so a few hundred bytes can describe 2^40 paths.
// Without shared containers each value visited costs at least one pickle byte, so a file
// never needs more visits than its data.pkl has bytes; kMinVisits is the floor for small
// files.
constexpr std::uint64_t kMinVisits = 1'000'000;
// The dotted keys built along the way: a long key string shared by many values would
// otherwise cost its length once per value (in time, and in memory for tensor keys).
constexpr std::uint64_t kMinKeyBytes = std::uint64_t{1} << 28;
constexpr std::uint64_t kKeyBytesPerPickleByte = 64;
// The tensors' bytes stay within a small multiple of their storages' (views, tied weights,
// a few expanded tensors) unless one tensor is reached along many paths.
constexpr std::uint64_t kOutputPerStorageByte = 64;
constexpr std::uint64_t kOutputSlack = std::uint64_t{1} << 30;

struct StorageType {
  std::string_view name;
  DType dtype;
};
constexpr std::array<StorageType, 10> kStorageTypes{{{"torch.DoubleStorage", DType::F64},
                                                     {"torch.FloatStorage", DType::F32},
                                                     {"torch.HalfStorage", DType::F16},
                                                     {"torch.BFloat16Storage", DType::BF16},
                                                     {"torch.LongStorage", DType::I64},
                                                     {"torch.IntStorage", DType::I32},
                                                     {"torch.ShortStorage", DType::I16},
                                                     {"torch.CharStorage", DType::I8},
                                                     {"torch.ByteStorage", DType::U8},
                                                     {"torch.BoolStorage", DType::Bool}}};

// "a dict", "an int", "an argparse.Namespace object".
std::string a(const PyObject& v) {
  const std::string d = internal::describe(v);
  return (std::string("aeiouAEIOU").find(d[0]) != std::string::npos ? "an " : "a ") + d;
}

// Latin-1 bytes of a UTF-8 string whose code points are all < 256 (the way protocol 2
// pickles bytes objects: _codecs.encode(str, 'latin1')); nullopt otherwise.
std::optional<std::string> utf8_to_latin1(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if ((c & 0xe0) == 0xc0 && c <= 0xc3 && i + 1 < s.size() &&
               (static_cast<unsigned char>(s[i + 1]) & 0xc0) == 0x80) {
      out.push_back(static_cast<char>(((c & 0x03) << 6) | (s[i + 1] & 0x3f)));
      ++i;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

class Reader {
 public:
  using Found = std::vector<std::pair<std::string, const TensorRef*>>;

  explicit Reader(const std::filesystem::path& path) : file_(path.string()), zip_(path, kOp) {}

  template <class E = IoError, class... Args>
  [[noreturn]] void fail(Args&&... args) const {
    detail::fail<E>(kOp, "'", file_, "': ", std::forward<Args>(args)...);
  }

  PyRef load_pickle() {
    find_prefix();
    auto idx = zip_.find(prefix_ + "byteorder");
    if (idx) {
      const auto b = zip_.read(*idx);
      const std::string order(b.begin(), b.end());
      if (order == "big") {
        big_endian_ = true;
      } else if (order != "little") {
        fail("corrupt archive: byteorder record says '", order, "'");
      }
    }
    const auto pkl = zip_.read(*zip_.find(prefix_ + "data.pkl"));
    internal::Unpickler::Hooks hooks;
    hooks.persistent_load = [this](const PyRef& pid) { return persistent_load(pid); };
    hooks.call = [this](const std::string& name, const std::vector<PyRef>& args) {
      return call(name, args);
    };
    internal::Unpickler u(pkl, arena_, kOp, "'" + file_ + "' (" + prefix_ + "data.pkl)",
                          std::move(hooks));
    max_visits_ = std::max<std::uint64_t>(kMinVisits, pkl.size());
    max_key_bytes_ = std::max<std::uint64_t>(kMinKeyBytes, kKeyBytesPerPickleByte * pkl.size());
    return u.load();
  }

  /// The tensors of `v` with their dotted keys, in order. Every check on the structure
  /// (depth, duplicate keys, unreadable objects, the work and size bounds) comes before any
  /// tensor data is read.
  NamedTensors tensors_of(const PyRef& v) {
    if (count_paths(v) > max_visits_) {
      fail("too many values to flatten: more than ", max_visits_,
           " (shared sub-objects reached along too many paths)");
    }
    Found found;
    flatten(v, "", 0, found);
    check_output_size(found);
    NamedTensors out;
    out.tensors.reserve(found.size());
    for (auto& [key, t] : found) {
      TensorData data = materialize(*t, key);
      out.tensors.emplace_back(std::move(key), std::move(data));
    }
    return out;
  }

  /// tensors_of without reading any data: the views with their keys, in order, each
  /// checked (structure, dtype, storage record) so that reading them later can fail only on
  /// the data itself (a CRC mismatch, a read error).
  Found refs_of(const PyRef& v) {
    if (count_paths(v) > max_visits_) {
      fail("too many values to flatten: more than ", max_visits_,
           " (shared sub-objects reached along too many paths)");
    }
    Found found;
    flatten(v, "", 0, found);
    check_output_size(found);
    return found;
  }

  friend class LazyPyTorch;

  const std::string& file() const { return file_; }
  const internal::ZipReader& zip() const { return zip_; }

 private:
  // The number of values flatten(v) would visit (one per path from v), saturated just past
  // max_visits_, in time linear in the number of distinct objects: memoized per object,
  // iterative (no recursion limit), back edges of cycles skipped (flatten reports a cycle
  // by its depth). The exponential cases are refused here at once; visit() still bounds
  // what this count cannot see (a cycle walked down to the depth limit).
  std::uint64_t count_paths(const PyRef& root) const {
    const std::uint64_t cap = max_visits_ + 1;
    const auto add = [cap](std::uint64_t a, std::uint64_t b) { return std::min(cap, a + b); };
    struct Frame {
      PyRef v;
      std::size_t next;
      std::uint64_t sum;
    };
    std::unordered_map<const internal::PyObject*, std::uint64_t> done;
    std::unordered_set<const internal::PyObject*> open{root};
    std::vector<Frame> stack{{root, 0, 1}};
    while (true) {
      const PyRef v = stack.back().v;
      const std::size_t n_items = v->items.size();
      const std::size_t i = stack.back().next;
      if (i < n_items + v->dict.size()) {
        ++stack.back().next;
        const PyRef c = i < n_items ? v->items[i] : v->dict[i - n_items].second;
        if (const auto it = done.find(c); it != done.end()) {
          stack.back().sum = add(stack.back().sum, it->second);
        } else if (open.insert(c).second) {
          stack.push_back({c, 0, 1});
        }
        continue;
      }
      const std::uint64_t total = stack.back().sum;
      open.erase(v);
      done.emplace(v, total);
      stack.pop_back();
      if (stack.empty()) return total;
      stack.back().sum = add(stack.back().sum, total);
    }
  }

  // Counts one visited value and its key against the bounds (see kMinVisits, kMinKeyBytes).
  void visit(const std::string& key) {
    if (++visits_ > max_visits_) {
      fail("too many values to flatten: more than ", max_visits_, " visited, at '",
           key.substr(0, 200), "' (shared sub-objects reached along too many paths)");
    }
    key_bytes_ += key.size();
    if (key_bytes_ > max_key_bytes_) {
      fail("too many key bytes to flatten: the dotted keys exceed ", max_key_bytes_,
           " bytes in all (at a key of ", key.size(), " bytes)");
    }
  }

  void flatten(const PyRef& v, const std::string& key, int depth, Found& out) {
    if (depth > kMaxDepth) {
      fail("nesting deeper than ", kMaxDepth, " levels at '", key, "' (a cyclic structure?)");
    }
    visit(key);
    const auto child = [&](const std::string& name) {
      return key.empty() ? name : key + "." + name;
    };
    switch (v->kind) {
      case PyKind::Tensor:
        if (!seen_.insert(key).second) {
          fail("the key '", key, "' occurs twice once nested dicts are flattened");
        }
        out.emplace_back(key, v->tensor.get());
        break;
      case PyKind::Dict:
        for (const auto& [k, val] : v->dict) {
          if (k->kind == PyKind::Str) {
            flatten(val, child(k->s), depth + 1, out);
          } else if (k->kind == PyKind::Int) {
            flatten(val, child(std::to_string(k->i)), depth + 1, out);
          } else if (holds_tensors(val, key, depth + 1)) {
            fail<UnsupportedError>("a dict at '", key, "' has ", a(*k),
                                   " key; only str and int keys can name tensors");
          }
        }
        break;
      case PyKind::List:
      case PyKind::Tuple:
        for (std::size_t i = 0; i < v->items.size(); ++i) {
          flatten(v->items[i], child(std::to_string(i)), depth + 1, out);
        }
        break;
      case PyKind::Object:
      case PyKind::Storage:
        fail<UnsupportedError>("'", key, "' holds ", a(*v),
                               ", which cannot be read without running Python; read a sub-dict "
                               "with PyTorchOptions::select");
      default:
        break;  // plain values (numbers, strings, None, globals) are not tensors
    }
  }

  // Whether `v` (a value in the dict at `key` under a key that cannot name a tensor)
  // contains a tensor.
  bool holds_tensors(const PyRef& v, const std::string& key, int depth) {
    if (depth > kMaxDepth) return false;
    visit(key);
    if (v->kind == PyKind::Tensor) return true;
    for (const auto& i : v->items) {
      if (holds_tensors(i, key, depth + 1)) return true;
    }
    for (const auto& kv : v->dict) {
      if (holds_tensors(kv.second, key, depth + 1)) return true;
    }
    return false;
  }

  // Refuses a result far larger than the storages it is copied from (one tensor repeated
  // many times) before any memory is allocated for it. A storage counts with the size of its
  // record, at most what its persistent id claims; sizes that overflow are left to
  // materialize(), which names the tensor.
  void check_output_size(const Found& found) const {
    std::map<std::string, std::uint64_t> storages;
    std::uint64_t out = 0;
    for (const auto& f : found) {
      const StorageRef& s = *f.second->storage;
      if (!s.dtype) continue;
      const std::uint64_t elem = dtype_size(*s.dtype);
      std::uint64_t n = elem;
      for (const auto d : f.second->size) {
        if (d < 0 || __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return;
      }
      if (__builtin_add_overflow(out, n, &out)) return;
      if (storages.count(s.key) == 0) {
        std::uint64_t claimed = 0;
        if (__builtin_mul_overflow(static_cast<std::uint64_t>(s.numel), elem, &claimed)) return;
        const auto idx = zip_.find(prefix_ + "data/" + s.key);
        storages.emplace(s.key, idx ? std::min(claimed, zip_.size(*idx)) : 0);
      }
    }
    std::uint64_t in = 0;
    for (const auto& st : storages) {
      if (__builtin_add_overflow(in, st.second, &in)) return;
    }
    std::uint64_t limit = 0;
    if (__builtin_mul_overflow(in, kOutputPerStorageByte, &limit) ||
        __builtin_add_overflow(limit, kOutputSlack, &limit)) {
      return;
    }
    if (out > limit) {
      fail("too many tensor bytes: the ", found.size(), " tensors hold ", out,
           " bytes, copied from ", in,
           " bytes of storage records (a tensor reached along too many paths?)");
    }
  }

  void find_prefix() {
    const auto names = zip_.names();
    for (const auto& n : names) {
      const auto slash = n.find('/');
      if (slash != std::string::npos && n.compare(slash, std::string::npos, "/data.pkl") == 0) {
        prefix_ = n.substr(0, slash + 1);
        break;
      }
    }
    if (prefix_.empty()) {
      fail("not a torch.save archive: no <name>/data.pkl record among ", names.size(), " entries");
    }
    if (zip_.find(prefix_ + "constants.pkl")) {
      fail<UnsupportedError>(
          "a TorchScript archive (torch.jit.save); save the model's "
          "state_dict() with torch.save instead");
    }
  }

  PyRef persistent_load(const PyRef& pid) {
    const auto& it = pid->items;
    if (pid->kind != PyKind::Tuple || it.size() < 5 || it[0]->kind != PyKind::Str ||
        it[0]->s != "storage") {
      fail("corrupt pickle: unexpected persistent id (", a(*pid),
           "; expected ('storage', type, key, location, numel))");
    }
    if (it[1]->kind != PyKind::Global ||
        (it[2]->kind != PyKind::Str && it[2]->kind != PyKind::Int) || it[4]->kind != PyKind::Int ||
        it[4]->i < 0) {
      fail("corrupt pickle: malformed storage id (type ", internal::describe(*it[1]), ", key ",
           internal::describe(*it[2]), ", numel ", internal::describe(*it[4]), ")");
    }
    auto ref = std::make_shared<StorageRef>();
    ref->key = it[2]->kind == PyKind::Str ? it[2]->s : std::to_string(it[2]->i);
    ref->type_name = it[1]->s;
    ref->numel = it[4]->i;
    for (const auto& t : kStorageTypes) {
      if (t.name == ref->type_name) ref->dtype = t.dtype;
    }
    auto s = arena_.make(PyKind::Storage);
    s->storage = std::move(ref);
    return s;
  }

  static bool int_tuple(const PyRef& v) {
    if (v->kind != PyKind::Tuple) return false;
    return std::all_of(v->items.begin(), v->items.end(),
                       [](const PyRef& x) { return x->kind == PyKind::Int; });
  }

  PyRef call(const std::string& name, const std::vector<PyRef>& args) {
    if (name == "collections.OrderedDict") {
      auto d = arena_.make(PyKind::Dict);
      if (!args.empty() && (args[0]->kind == PyKind::List || args[0]->kind == PyKind::Tuple)) {
        for (const auto& kv : args[0]->items) {
          if ((kv->kind == PyKind::Tuple || kv->kind == PyKind::List) && kv->items.size() == 2) {
            d->set_item(kv->items[0], kv->items[1]);
          }
        }
      }
      return d;
    }
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
      if (args.size() < 4 || args[0]->kind != PyKind::Storage || args[1]->kind != PyKind::Int ||
          !int_tuple(args[2]) || !int_tuple(args[3])) {
        fail("corrupt pickle: ", name, " expects (storage, offset, size, stride, ...)");
      }
      auto t = std::make_shared<TensorRef>();
      t->storage = args[0]->storage;
      t->offset = args[1]->i;
      for (const auto& d : args[2]->items) t->size.push_back(d->i);
      for (const auto& d : args[3]->items) t->stride.push_back(d->i);
      auto v = arena_.make(PyKind::Tensor);
      v->tensor = std::move(t);
      return v;
    }
    if (name == "torch._utils._rebuild_parameter" ||
        name == "torch._utils._rebuild_parameter_with_state") {
      if (args.empty() || args[0]->kind != PyKind::Tensor) {
        fail("corrupt pickle: ", name, " expects a tensor as its first argument");
      }
      return args[0];
    }
    if (name == "torch._tensor._rebuild_from_type_v2") {
      // (func, type, args, state): a tensor subclass; the data comes from func(*args).
      if (args.size() < 3 || args[0]->kind != PyKind::Global || args[2]->kind != PyKind::Tuple) {
        fail("corrupt pickle: ", name, " expects (func, type, args, state)");
      }
      if (PyRef r = call(args[0]->s, args[2]->items)) return r;
      auto obj = arena_.make(PyKind::Object);
      obj->s = args[0]->s;
      return obj;
    }
    if (name == "torch.Size" && args.size() == 1 && int_tuple(args[0])) return args[0];
    if (name == "_codecs.encode" && args.size() == 2 && args[0]->kind == PyKind::Str &&
        args[1]->kind == PyKind::Str && (args[1]->s == "latin1" || args[1]->s == "latin-1")) {
      if (auto bytes = utf8_to_latin1(args[0]->s)) {
        auto b = arena_.make(PyKind::Bytes);
        b->s = std::move(*bytes);
        return b;
      }
    }
    return nullptr;
  }

  /// A tensor view checked against its storage record, before any data is read.
  struct View {
    DType dtype;
    std::size_t elem;
    Shape shape;
    std::int64_t numel;
    std::uint64_t record;  // the zip entry of the storage
    bool whole;            // the view is exactly its storage, row-major
  };

  /// Checks everything about `t` that does not need its data: a dtype, sizes and strides
  /// within bounds, the storage record present with the right size. Throws as read_pytorch.
  View check_view(const TensorRef& t, const std::string& key) {
    const StorageRef& s = *t.storage;
    if (!s.dtype) {
      fail<UnsupportedError>("tensor '", key, "' is stored as ", s.type_name,
                             ", which has no Ember dtype");
    }
    const DType dtype = *s.dtype;
    const std::size_t elem = dtype_size(dtype);
    const std::size_t rank = t.size.size();
    Shape shape(t.size);
    if (t.stride.size() != rank || t.offset < 0) {
      fail("corrupt pickle: tensor '", key, "' has size ", shape, ", ", t.stride.size(),
           " strides and offset ", t.offset);
    }
    std::int64_t numel = 1;
    std::int64_t last = t.offset;  // the largest storage index the view touches
    for (std::size_t d = 0; d < rank; ++d) {
      if (t.size[d] < 0 || t.stride[d] < 0) {
        fail("corrupt pickle: tensor '", key, "' has size ", shape,
             " with negative sizes or strides");
      }
      std::int64_t span = 0;
      if (__builtin_mul_overflow(numel, t.size[d], &numel) ||
          (t.size[d] > 0 && (__builtin_mul_overflow(t.size[d] - 1, t.stride[d], &span) ||
                             __builtin_add_overflow(last, span, &last)))) {
        fail("corrupt pickle: tensor '", key, "' of size ", shape, " is too large");
      }
    }
    std::int64_t out_bytes = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::int64_t>(elem), &out_bytes) ||
        out_bytes > (std::int64_t{1} << 40)) {
      fail("corrupt pickle: tensor '", key, "' of size ", shape, " is too large");
    }
    const std::string record = prefix_ + "data/" + s.key;
    auto idx = zip_.find(record);
    if (!idx) fail("corrupt archive: the storage record '", record, "' is missing");
    std::uint64_t want = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(s.numel), elem, &want) ||
        zip_.size(*idx) != want) {
      fail("corrupt archive: the storage record '", record, "' has ", zip_.size(*idx),
           " bytes, but ", s.numel, " elements of ", s.type_name, " need ", want);
    }
    if (numel > 0 && last >= s.numel) {
      fail("corrupt pickle: tensor '", key, "' (size ", shape, ", offset ", t.offset,
           ") reaches storage element ", last, " but storage '", s.key, "' holds ", s.numel);
    }
    bool row_major = true;
    const auto contiguous = shape.contiguous_strides();
    for (std::size_t d = 0; d < rank; ++d) {
      if (t.size[d] != 1 && t.stride[d] != contiguous[d]) row_major = false;
    }
    const bool whole = row_major && t.offset == 0 && numel == s.numel;
    return {dtype, elem, std::move(shape), numel, *idx, whole};
  }

  /// The storage's bytes as stored (byte-swapped on big-endian files) into `out`.
  void read_storage(std::uint64_t record, std::size_t elem, std::vector<std::uint8_t>& out,
                    bool check_crc = true) {
    zip_.read_into(record, out, check_crc);
    if (big_endian_ && elem > 1) {
      for (std::size_t i = 0; i + elem <= out.size(); i += elem) {
        std::reverse(out.begin() + static_cast<std::ptrdiff_t>(i),
                     out.begin() + static_cast<std::ptrdiff_t>(i + elem));
      }
    }
  }

  const std::vector<std::uint8_t>& storage_bytes(const StorageRef& s, std::uint64_t record,
                                                 std::size_t elem) {
    auto it = storages_.find(s.key);
    if (it != storages_.end()) return it->second;
    std::vector<std::uint8_t> bytes;
    read_storage(record, elem, bytes);
    return storages_.emplace(s.key, std::move(bytes)).first->second;
  }

  /// The view's elements, row-major, from its storage's bytes `src` into `dst`.
  static void copy_view(const TensorRef& t, const View& v, const std::uint8_t* src,
                        std::uint8_t* dst) {
    if (v.numel == 0) return;
    const std::size_t rank = t.size.size();
    // Row-major copy: contiguous runs of the innermost dims with memcpy, the rest by index.
    const auto contiguous = Shape(t.size).contiguous_strides();
    std::size_t inner = rank;  // dims [inner, rank) are laid out contiguously
    std::int64_t run = 1;
    while (inner > 0 && (t.size[inner - 1] == 1 || t.stride[inner - 1] == contiguous[inner - 1])) {
      --inner;
      run *= t.size[inner];
    }
    const std::size_t run_bytes = static_cast<std::size_t>(run) * v.elem;
    std::vector<std::int64_t> idx(inner, 0);
    std::size_t out = 0;
    while (true) {
      std::int64_t pos = t.offset;
      for (std::size_t d = 0; d < inner; ++d) pos += idx[d] * t.stride[d];
      std::memcpy(dst + out, src + static_cast<std::size_t>(pos) * v.elem, run_bytes);
      out += run_bytes;
      std::size_t d = inner;
      while (d > 0 && ++idx[d - 1] == t.size[d - 1]) idx[--d] = 0;
      if (d == 0) break;
    }
  }

  TensorData materialize(const TensorRef& t, const std::string& key) {
    View v = check_view(t, key);
    const auto& bytes = storage_bytes(*t.storage, v.record, v.elem);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(v.numel) * v.elem);
    copy_view(t, v, bytes.data(), out.data());
    return TensorData::from_bytes(std::move(out), std::move(v.shape), v.dtype);
  }

  std::string file_;
  internal::PyArena arena_;
  internal::ZipReader zip_;
  std::string prefix_;
  bool big_endian_ = false;
  std::map<std::string, std::vector<std::uint8_t>> storages_;
  std::unordered_set<std::string> seen_;
  std::uint64_t visits_ = 0;
  std::uint64_t max_visits_ = kMinVisits;
  std::uint64_t key_bytes_ = 0;
  std::uint64_t max_key_bytes_ = kMinKeyBytes;
};

// The value at `path` in nested dicts: the whole path as one key first, then a first
// component "a" of "a.b.c" followed by the rest.
PyRef find_path(const PyRef& v, std::string_view path) {
  if (v->kind != PyKind::Dict) return nullptr;
  if (PyRef r = v->get(std::string(path))) return r;
  for (std::size_t dot = path.find('.'); dot != std::string_view::npos;
       dot = path.find('.', dot + 1)) {
    if (PyRef head = v->get(std::string(path.substr(0, dot)))) {
      if (PyRef r = find_path(head, path.substr(dot + 1))) return r;
    }
  }
  return nullptr;
}

void check_not_legacy(const std::filesystem::path& path) {
  std::ifstream in = open_for_reading(path, kOp);
  unsigned char head[2] = {0, 0};
  in.read(reinterpret_cast<char*>(head), 2);
  if (in.gcount() == 2 && head[0] == 0x80 && head[1] <= 5) {
    detail::fail<UnsupportedError>(
        kOp, "'", path.string(),
        "': the legacy torch.save format (torch < 1.6 or _use_new_zipfile_serialization=False); "
        "re-save it with a current torch");
  }
}

/// The value read_pytorch takes its tensors from: the pickle's root, or options.select in it.
PyRef selected(Reader& reader, const PyTorchOptions& options) {
  PyRef root = reader.load_pickle();
  if (options.select.empty()) {
    if (root->kind == PyKind::Tensor) {
      reader.fail<UnsupportedError>("the file holds a single tensor, not a dict of tensors");
    }
    if (root->kind == PyKind::Object) {
      reader.fail<UnsupportedError>("the file holds ", a(*root),
                                    " (a whole pickled model?), not a dict of tensors; save "
                                    "model.state_dict() instead");
    }
    return root;
  }
  PyRef sub = find_path(root, options.select);
  if (!sub) {
    std::string keys;
    std::size_t n = 0;
    if (root->kind == PyKind::Dict) {
      for (const auto& [k, v] : root->dict) {
        if (k->kind != PyKind::Str) continue;
        if (n++ == 20) {
          keys += ", ...";
          break;
        }
        keys += (keys.empty() ? "" : ", ") + k->s;
      }
    }
    reader.fail("no entry '", options.select,
                "' to select; the top-level keys are: ", keys.empty() ? "(none)" : keys);
  }
  if (sub->kind != PyKind::Dict && sub->kind != PyKind::List && sub->kind != PyKind::Tuple) {
    reader.fail<UnsupportedError>("the selected entry '", options.select, "' is ", a(*sub),
                                  ", not a dict of tensors");
  }
  return sub;
}

/// A PyTorch file read tensor by tensor: the pickle parsed and every view checked at
/// opening, each tensor's storage read only when asked for, straight into the caller's
/// buffer when the tensor is its whole storage (the usual state dict).
class LazyPyTorch final : public internal::LazyTensors {
 public:
  LazyPyTorch(const std::filesystem::path& path, const PyTorchOptions& options) : reader_(path) {
    found_ = reader_.refs_of(selected(reader_, options));
    views_.reserve(found_.size());
    for (const auto& [key, t] : found_) {
      views_.push_back(reader_.check_view(*t, key));
      entries.push_back({key, views_.back().dtype, views_.back().shape});
    }
  }

  void read(std::size_t i, TensorData& out) override {
    if (!verified_) {
      // Every storage to be read passes its CRC check before the first tensor is handed
      // out, so nn::load either loads all or fails with the module unchanged.
      std::unordered_set<std::uint64_t> seen;
      for (const Reader::View& w : views_) {
        if (seen.insert(w.record).second) reader_.zip().verify(w.record);
      }
      verified_ = true;
    }
    const Reader::View& v = views_[i];
    std::vector<std::uint8_t> bytes = std::move(out).into_bytes();
    if (v.whole) {
      reader_.read_storage(v.record, v.elem, bytes, false);
    } else {
      reader_.read_storage(v.record, v.elem, scratch_, false);
      bytes.resize(static_cast<std::size_t>(v.numel) * v.elem);
      Reader::copy_view(*found_[i].second, v, scratch_.data(), bytes.data());
    }
    out = TensorData::from_bytes(std::move(bytes), v.shape, v.dtype);
  }

 private:
  Reader reader_;
  Reader::Found found_;
  std::vector<Reader::View> views_;
  std::vector<std::uint8_t> scratch_;
  bool verified_ = false;
};

}  // namespace

NamedTensors read_pytorch(const std::filesystem::path& path, const PyTorchOptions& options) {
  check_not_legacy(path);
  Reader reader(path);
  return reader.tensors_of(selected(reader, options));
}

namespace internal {
std::unique_ptr<LazyTensors> open_pytorch_lazy(const std::filesystem::path& path,
                                               const PyTorchOptions& options) {
  check_not_legacy(path);
  return std::make_unique<LazyPyTorch>(path, options);
}
}  // namespace internal

}  // namespace ember::store
