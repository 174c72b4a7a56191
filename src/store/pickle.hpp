// A restricted Python pickle reader: builds a tree of plain values (None, bool, int, float,
// str, bytes, tuple, list, dict, global references) and never runs code. Calls of globals
// (REDUCE, NEWOBJ) go to a hook that knows a fixed set of safe callables (PyTorch's tensor
// rebuild functions, OrderedDict); anything else becomes an opaque Object that remembers
// the callable's name, so a caller can report it where it matters.
//
// Opcodes: protocols 2-5 binary opcodes (PROTO, FRAME, STOP, MARK, POP, POP_MARK, DUP,
// NONE, NEWTRUE/NEWFALSE, BININT/BININT1/BININT2, LONG1/LONG4 (up to 64 bits), BINFLOAT,
// BINUNICODE/SHORT_BINUNICODE/BINUNICODE8, BINSTRING/SHORT_BINSTRING, BINBYTES/
// SHORT_BINBYTES/BINBYTES8/BYTEARRAY8, EMPTY_TUPLE/TUPLE/TUPLE1-3, EMPTY_LIST/LIST/APPEND/
// APPENDS, EMPTY_DICT/DICT/SETITEM/SETITEMS, EMPTY_SET/ADDITEMS/FROZENSET, GLOBAL/
// STACK_GLOBAL, REDUCE, BUILD, NEWOBJ/NEWOBJ_EX, BINPUT/LONG_BINPUT/MEMOIZE, BINGET/
// LONG_BINGET, BINPERSID). Text-protocol and extension opcodes throw UnsupportedError.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/dtype.hpp"
#include "ember/core/error.hpp"

namespace ember::store::internal {

struct PyObject;
/// Objects are owned by a PyArena; references between them are plain pointers, so the
/// cycles a pickle can build (a list that contains itself) cost nothing to free.
using PyRef = PyObject*;

enum class PyKind {
  None,
  Bool,
  Int,
  Float,
  Str,
  Bytes,
  Tuple,
  List,  // also sets and frozensets
  Dict,
  Global,   // a reference to module.name (not called)
  Object,   // the result of calling / building an unknown global
  Storage,  // a PyTorch storage (from a persistent id)
  Tensor,   // a PyTorch tensor view of a storage
};

/// PyTorch storage reference: the zip record data/<key>, `numel` elements of `dtype`
/// (nullopt when the storage class has no Ember dtype; `type_name` then says which).
struct StorageRef {
  std::string key;
  std::string type_name;
  std::optional<DType> dtype;
  std::int64_t numel = 0;
};

/// A strided view of a storage (torch._utils._rebuild_tensor_v2's arguments).
struct TensorRef {
  std::shared_ptr<const StorageRef> storage;
  std::int64_t offset = 0;
  std::vector<std::int64_t> size;
  std::vector<std::int64_t> stride;
};

struct PyObject {
  PyKind kind = PyKind::None;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  std::string s;             // Str, Bytes; Global and Object: "module.name"
  std::vector<PyRef> items;  // Tuple, List; Object: the call's arguments
  std::vector<std::pair<PyRef, PyRef>> dict;
  std::unordered_map<std::string, std::size_t> dict_index;  // str/int keys -> position
  std::shared_ptr<const StorageRef> storage;
  std::shared_ptr<const TensorRef> tensor;

  /// dict[key] = value (replaces an equal str/int key, as Python would).
  void set_item(PyRef key, PyRef value);
  /// The value of a str key, or nullptr.
  PyRef get(const std::string& key) const;
};

/// Owns every object of one unpickled tree.
class PyArena {
 public:
  PyRef make(PyKind k) {
    objects_.push_back(std::make_unique<PyObject>());
    objects_.back()->kind = k;
    return objects_.back().get();
  }

 private:
  std::vector<std::unique_ptr<PyObject>> objects_;
};

/// "str", "dict", "torch.FloatStorage object", ... for messages.
std::string describe(const PyObject& v);

class Unpickler {
 public:
  struct Hooks {
    /// BINPERSID: the persistent id -> the object it stands for. Required.
    std::function<PyRef(const PyRef& pid)> persistent_load;
    /// REDUCE / NEWOBJ of the global `name` ("module.qualname") with `args`; nullptr means
    /// "unknown callable" (an opaque Object is built).
    std::function<PyRef(const std::string& name, const std::vector<PyRef>& args)> call;
  };

  /// `context` names the data in messages ("'model.pt' (data.pkl)"); `op` prefixes them.
  /// Objects are created in `arena`, which must outlive the result.
  Unpickler(std::span<const std::uint8_t> data, PyArena& arena, std::string op, std::string context,
            Hooks hooks);

  /// Runs to STOP and returns the result. Throws IoError for malformed data (truncated,
  /// stack underflow, bad memo index, unknown opcode) and UnsupportedError for opcodes
  /// outside the supported set, both naming the byte offset.
  PyRef load();

 private:
  template <class E = ember::IoError, class... Args>
  [[noreturn]] void fail(Args&&... args) const;
  std::span<const std::uint8_t> take(std::uint64_t n);
  std::uint64_t read_le(int n);
  PyRef pop();
  PyRef& top();
  std::vector<PyRef> pop_mark();
  PyRef memo_get(std::uint64_t idx);
  PyRef string(std::uint64_t n, PyKind kind);
  PyRef make_call(const PyRef& callable, std::vector<PyRef> args);

  std::span<const std::uint8_t> data_;
  PyArena& arena_;
  std::string op_;
  std::string context_;
  Hooks hooks_;
  std::size_t pos_ = 0;
  std::size_t op_pos_ = 0;
  std::vector<PyRef> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, PyRef> memo_;
};

}  // namespace ember::store::internal
