// The restricted pickle reader (see pickle.hpp). Opcode values and argument encodings are
// those of CPython's Lib/pickletools.py.
#include "pickle.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace ember::store::internal {

namespace {

// Opcodes outside the supported set, by value, for messages.
const char* unsupported_name(std::uint8_t op) {
  switch (op) {
    case 'F':
      return "FLOAT";
    case 'I':
      return "INT";
    case 'L':
      return "LONG";
    case 'S':
      return "STRING";
    case 'V':
      return "UNICODE";
    case 'P':
      return "PERSID";
    case 'g':
      return "GET";
    case 'p':
      return "PUT";
    case 'i':
      return "INST";
    case 'o':
      return "OBJ";
    case 0x82:
      return "EXT1";
    case 0x83:
      return "EXT2";
    case 0x84:
      return "EXT4";
    case 0x97:
      return "NEXT_BUFFER";
    case 0x98:
      return "READONLY_BUFFER";
    default:
      return nullptr;
  }
}

std::string dict_key(const PyObject& k) {
  if (k.kind == PyKind::Str) return "s" + k.s;
  if (k.kind == PyKind::Int) return "i" + std::to_string(k.i);
  return {};
}

}  // namespace

void PyObject::set_item(PyRef key, PyRef value) {
  const std::string k = dict_key(*key);
  if (!k.empty()) {
    auto [it, fresh] = dict_index.emplace(k, dict.size());
    if (!fresh) {
      dict[it->second].second = std::move(value);
      return;
    }
  }
  dict.emplace_back(std::move(key), std::move(value));
}

PyRef PyObject::get(const std::string& key) const {
  auto it = dict_index.find("s" + key);
  return it == dict_index.end() ? nullptr : dict[it->second].second;
}

std::string describe(const PyObject& v) {
  switch (v.kind) {
    case PyKind::None:
      return "None";
    case PyKind::Bool:
      return "bool";
    case PyKind::Int:
      return "int";
    case PyKind::Float:
      return "float";
    case PyKind::Str:
      return "str";
    case PyKind::Bytes:
      return "bytes";
    case PyKind::Tuple:
      return "tuple";
    case PyKind::List:
      return "list";
    case PyKind::Dict:
      return "dict";
    case PyKind::Global:
      return "global " + v.s;
    case PyKind::Object:
      return v.s + " object";
    case PyKind::Storage:
      return "storage";
    case PyKind::Tensor:
      return "tensor";
  }
  return "?";
}

Unpickler::Unpickler(std::span<const std::uint8_t> data, PyArena& arena, std::string op,
                     std::string context, Hooks hooks)
    : data_(data),
      arena_(arena),
      op_(std::move(op)),
      context_(std::move(context)),
      hooks_(std::move(hooks)) {}

template <class E, class... Args>
void Unpickler::fail(Args&&... args) const {
  detail::fail<E>(op_, context_, ": ", std::forward<Args>(args)..., " (pickle byte ", op_pos_, ")");
}

std::span<const std::uint8_t> Unpickler::take(std::uint64_t n) {
  if (n > data_.size() - pos_)
    fail("truncated pickle: ", n, " bytes needed, ", data_.size() - pos_, " left");
  auto s = data_.subspan(pos_, static_cast<std::size_t>(n));
  pos_ += static_cast<std::size_t>(n);
  return s;
}

std::uint64_t Unpickler::read_le(int n) {
  auto b = take(static_cast<std::uint64_t>(n));
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[static_cast<std::size_t>(i)];
  return v;
}

PyRef Unpickler::pop() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
    fail("corrupt pickle: stack underflow");
  }
  PyRef v = std::move(stack_.back());
  stack_.pop_back();
  return v;
}

PyRef& Unpickler::top() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
    fail("corrupt pickle: stack underflow");
  }
  return stack_.back();
}

std::vector<PyRef> Unpickler::pop_mark() {
  if (marks_.empty()) fail("corrupt pickle: no MARK on the stack");
  const std::size_t m = marks_.back();
  marks_.pop_back();
  std::vector<PyRef> out(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                         std::make_move_iterator(stack_.end()));
  stack_.resize(m);
  return out;
}

PyRef Unpickler::memo_get(std::uint64_t idx) {
  auto it = memo_.find(idx);
  if (it == memo_.end()) fail("corrupt pickle: memo entry ", idx, " was never stored");
  return it->second;
}

PyRef Unpickler::string(std::uint64_t n, PyKind kind) {
  auto b = take(n);
  auto v = arena_.make(kind);
  v->s.assign(reinterpret_cast<const char*>(b.data()), b.size());
  return v;
}

PyRef Unpickler::make_call(const PyRef& callable, std::vector<PyRef> args) {
  if (callable->kind == PyKind::Global) {
    if (hooks_.call) {
      if (PyRef r = hooks_.call(callable->s, args)) return r;
    }
    auto obj = arena_.make(PyKind::Object);
    obj->s = callable->s;
    obj->items = std::move(args);
    return obj;
  }
  auto obj = arena_.make(PyKind::Object);
  obj->s = "call of " + describe(*callable);
  return obj;
}

PyRef Unpickler::load() {
  auto push = [this](PyRef v) { stack_.push_back(std::move(v)); };
  auto make_int = [this](std::int64_t v) {
    auto p = arena_.make(PyKind::Int);
    p->i = v;
    return p;
  };
  auto make_seq = [this](PyKind k, std::vector<PyRef> items) {
    auto p = arena_.make(k);
    p->items = std::move(items);
    return p;
  };
  auto read_line = [this]() {
    std::string s;
    while (true) {
      const auto c = take(1)[0];
      if (c == '\n') return s;
      s.push_back(static_cast<char>(c));
      if (s.size() > 4096) fail("corrupt pickle: GLOBAL name longer than 4096 bytes");
    }
  };
  auto global = [this](std::string module, const std::string& name) {
    auto g = arena_.make(PyKind::Global);
    g->s = std::move(module) + "." + name;
    return g;
  };

  while (true) {
    op_pos_ = pos_;
    if (pos_ >= data_.size()) fail("truncated pickle: no STOP opcode");
    const std::uint8_t op = data_[pos_++];
    switch (op) {
      case 0x80: {  // PROTO
        const auto v = take(1)[0];
        if (v > 5) fail<UnsupportedError>("pickle protocol ", int(v), " is newer than 5");
        break;
      }
      case 0x95:  // FRAME: a length hint only
        take(8);
        break;
      case '.':  // STOP
        if (stack_.size() != 1 || !marks_.empty()) {
          fail("corrupt pickle: STOP with ", stack_.size(), " values and ", marks_.size(),
               " marks on the stack");
        }
        return stack_.back();
      case '(':  // MARK
        marks_.push_back(stack_.size());
        break;
      case '0':  // POP
        pop();
        break;
      case '1':  // POP_MARK
        pop_mark();
        break;
      case '2':  // DUP
        push(top());
        break;
      case 'N':
        push(arena_.make(PyKind::None));
        break;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        auto b = arena_.make(PyKind::Bool);
        b->b = op == 0x88;
        push(b);
        break;
      }
      case 'J':  // BININT: signed 32-bit
        push(make_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4)))));
        break;
      case 'K':  // BININT1
        push(make_int(static_cast<std::int64_t>(read_le(1))));
        break;
      case 'M':  // BININT2
        push(make_int(static_cast<std::int64_t>(read_le(2))));
        break;
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4: n bytes, little-endian two's complement
        std::uint64_t n = op == 0x8a ? read_le(1) : read_le(4);
        if (op == 0x8b && static_cast<std::int32_t>(n) < 0)
          fail("corrupt pickle: negative LONG4 length");
        auto b = take(n);
        if (n <= 8) {
          std::uint64_t u = 0;
          for (std::size_t i = n; i-- > 0;) u = (u << 8) | b[i];
          if (n > 0 && n < 8 && (b[n - 1] & 0x80)) u |= ~std::uint64_t{0} << (8 * n);
          push(make_int(static_cast<std::int64_t>(u)));
        } else {
          // Wider than 64 bits: kept as an approximate float (never a tensor field).
          double d = 0;
          for (std::size_t i = n; i-- > 0;) d = d * 256.0 + b[i];
          if (b[n - 1] & 0x80) d -= std::ldexp(1.0, static_cast<int>(8 * n));
          auto f = arena_.make(PyKind::Float);
          f->f = d;
          push(f);
        }
        break;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        auto b = take(8);
        std::uint64_t u = 0;
        for (int i = 0; i < 8; ++i) u = (u << 8) | b[static_cast<std::size_t>(i)];
        auto f = arena_.make(PyKind::Float);
        std::memcpy(&f->f, &u, 8);
        push(f);
        break;
      }
      case 'X':  // BINUNICODE
        push(string(read_le(4), PyKind::Str));
        break;
      case 0x8c:  // SHORT_BINUNICODE
        push(string(read_le(1), PyKind::Str));
        break;
      case 0x8d:  // BINUNICODE8
        push(string(read_le(8), PyKind::Str));
        break;
      case 'T': {  // BINSTRING: signed 32-bit length
        const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4)));
        if (n < 0) fail("corrupt pickle: negative BINSTRING length");
        push(string(static_cast<std::uint64_t>(n), PyKind::Str));
        break;
      }
      case 'U':  // SHORT_BINSTRING
        push(string(read_le(1), PyKind::Str));
        break;
      case 'B':  // BINBYTES
        push(string(read_le(4), PyKind::Bytes));
        break;
      case 'C':  // SHORT_BINBYTES
        push(string(read_le(1), PyKind::Bytes));
        break;
      case 0x8e:  // BINBYTES8
      case 0x96:  // BYTEARRAY8
        push(string(read_le(8), PyKind::Bytes));
        break;
      case ')':
        push(arena_.make(PyKind::Tuple));
        break;
      case 't':
        push(make_seq(PyKind::Tuple, pop_mark()));
        break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        const int n = op - 0x84;
        std::vector<PyRef> items(static_cast<std::size_t>(n));
        for (int k = n - 1; k >= 0; --k) items[static_cast<std::size_t>(k)] = pop();
        push(make_seq(PyKind::Tuple, std::move(items)));
        break;
      }
      case ']':
        push(arena_.make(PyKind::List));
        break;
      case 'l':
        push(make_seq(PyKind::List, pop_mark()));
        break;
      case 0x8f:  // EMPTY_SET
        push(arena_.make(PyKind::List));
        break;
      case 0x91:  // FROZENSET
        push(make_seq(PyKind::List, pop_mark()));
        break;
      case 'a': {  // APPEND
        auto v = pop();
        auto& l = top();
        if (l->kind == PyKind::List) {
          l->items.push_back(std::move(v));
        } else if (l->kind != PyKind::Object) {
          fail("corrupt pickle: APPEND to a ", describe(*l));
        }
        break;
      }
      case 'e':     // APPENDS
      case 0x90: {  // ADDITEMS
        auto vs = pop_mark();
        auto& l = top();
        if (l->kind == PyKind::List) {
          for (auto& v : vs) l->items.push_back(std::move(v));
        } else if (l->kind != PyKind::Object) {
          fail("corrupt pickle: APPENDS/ADDITEMS to a ", describe(*l));
        }
        break;
      }
      case '}':
        push(arena_.make(PyKind::Dict));
        break;
      case 'd': {  // DICT
        auto kv = pop_mark();
        if (kv.size() % 2) fail("corrupt pickle: DICT with an odd number of items");
        auto d = arena_.make(PyKind::Dict);
        for (std::size_t k = 0; k < kv.size(); k += 2) d->set_item(kv[k], kv[k + 1]);
        push(d);
        break;
      }
      case 's': {  // SETITEM
        auto v = pop();
        auto k = pop();
        auto& d = top();
        if (d->kind == PyKind::Dict) {
          d->set_item(std::move(k), std::move(v));
        } else if (d->kind != PyKind::Object) {
          fail("corrupt pickle: SETITEM on a ", describe(*d));
        }
        break;
      }
      case 'u': {  // SETITEMS
        auto kv = pop_mark();
        if (kv.size() % 2) fail("corrupt pickle: SETITEMS with an odd number of items");
        auto& d = top();
        if (d->kind == PyKind::Dict) {
          for (std::size_t k = 0; k < kv.size(); k += 2) d->set_item(kv[k], kv[k + 1]);
        } else if (d->kind != PyKind::Object) {
          fail("corrupt pickle: SETITEMS on a ", describe(*d));
        }
        break;
      }
      case 'c': {  // GLOBAL "module\nname\n"
        std::string module = read_line();
        push(global(std::move(module), read_line()));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        auto name = pop();
        auto module = pop();
        if (module->kind != PyKind::Str || name->kind != PyKind::Str) {
          fail("corrupt pickle: STACK_GLOBAL needs two strings, got ", describe(*module), " and ",
               describe(*name));
        }
        push(global(module->s, name->s));
        break;
      }
      case 'R':     // REDUCE
      case 0x81: {  // NEWOBJ
        auto args = pop();
        auto callable = pop();
        if (args->kind != PyKind::Tuple) {
          fail("corrupt pickle: ", op == 'R' ? "REDUCE" : "NEWOBJ", " arguments are a ",
               describe(*args), ", not a tuple");
        }
        push(make_call(callable, args->items));
        break;
      }
      case 0x92: {  // NEWOBJ_EX: cls, args, kwargs
        pop();
        auto args = pop();
        auto cls = pop();
        if (args->kind != PyKind::Tuple)
          fail("corrupt pickle: NEWOBJ_EX arguments are not a tuple");
        push(make_call(cls, args->items));
        break;
      }
      case 'b': {  // BUILD: set the state of the object below; plain values keep none
        pop();
        top();
        break;
      }
      case 'q':  // BINPUT
        memo_[read_le(1)] = top();
        break;
      case 'r':  // LONG_BINPUT
        memo_[read_le(4)] = top();
        break;
      case 0x94:  // MEMOIZE
        memo_[memo_.size()] = top();
        break;
      case 'h':  // BINGET
        push(memo_get(read_le(1)));
        break;
      case 'j':  // LONG_BINGET
        push(memo_get(read_le(4)));
        break;
      case 'Q': {  // BINPERSID
        auto pid = pop();
        push(hooks_.persistent_load(pid));
        break;
      }
      default: {
        if (const char* name = unsupported_name(op)) {
          fail<UnsupportedError>("unsupported pickle opcode ", name);
        }
        std::ostringstream hex;
        hex << "0x" << std::hex << int(op);
        fail("corrupt pickle: unknown opcode ", hex.str());
      }
    }
  }
}

}  // namespace ember::store::internal
