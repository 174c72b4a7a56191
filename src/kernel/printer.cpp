// The IR as text.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "ember/kernel/passes.hpp"

namespace ember::kernel {

namespace {

const char* kind_name(VarKind k) {
  switch (k) {
    case VarKind::Value:
      return "value";
    case VarKind::Mutable:
      return "var";
    case VarKind::Constant:
      return "const";
    case VarKind::Scalar:
      return "scalar";
    case VarKind::Buffer:
      return "buffer";
    case VarKind::Shared:
      return "shared";
    case VarKind::Local:
      return "local";
    case VarKind::Matrix:
      return "fragment";
  }
  return "?";
}

const char* access_name(Access a) {
  return a == Access::Read ? "read" : a == Access::Write ? "write" : "read_write";
}

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string run() {
    os_ << "kernel " << k_.name << " workgroup(" << k_.workgroup[0] << ", " << k_.workgroup[1]
        << ", " << k_.workgroup[2] << ")\n";
    for (const auto& [n, v] : k_.defines) os_ << "  define " << n << " = " << v << "\n";
    if (k_.contract) os_ << "  contract a * b + c into fma\n";
    for (VarId a : k_.args) {
      const VarInfo& v = k_.vars[a];
      os_ << "  arg %" << a << " " << v.name << ": " << kind_name(v.kind) << " "
          << type_name(v.type);
      if (v.kind == VarKind::Buffer) os_ << " rank " << v.rank << " " << access_name(v.access);
      os_ << "\n";
    }
    for (VarId id = 0; id < k_.vars.size(); ++id) {
      const VarInfo& v = k_.vars[id];
      if (v.kind == VarKind::Shared || v.kind == VarKind::Local)
        os_ << "  " << kind_name(v.kind) << " %" << id << ": " << type_name(v.type) << "["
            << v.length << "]\n";
      if (v.kind == VarKind::Mutable) os_ << "  var %" << id << ": " << type_name(v.type) << "\n";
      if (v.kind == VarKind::Matrix)
        os_ << "  fragment %" << id << ": " << type_name(v.type) << " "
            << (v.matrix.use == MatrixUse::A   ? "A"
                : v.matrix.use == MatrixUse::B ? "B"
                                               : "Acc")
            << " " << int(v.matrix.m) << "x" << int(v.matrix.n) << "x" << int(v.matrix.k) << "\n";
    }
    block(k_.body, 1);
    return os_.str();
  }

 private:
  std::string operand(VarId v) const {
    const VarInfo& i = k_.vars[v];
    std::ostringstream s;
    if (i.kind != VarKind::Constant) {
      s << '%' << v;
      return s.str();
    }
    if (is_float(i.type.elem))
      s << i.f;
    else
      s << i.i;
    s << type_name(i.type);
    return s.str();
  }

  void block(const Block& b, int depth) {
    const std::string pad(static_cast<std::size_t>(depth) * 2, ' ');
    for (const Inst& i : b) {
      os_ << pad;
      if (i.out != kNoVar) os_ << "%" << i.out << ": " << type_name(k_.vars[i.out].type) << " = ";
      os_ << op_name(i.op);
      if (i.op == Op::Atomic) {
        static const char* names[] = {"add", "min", "max", "exchange", "compare_exchange"};
        os_ << "." << names[i.aux];
      } else if (i.aux != 0 || i.op == Op::Extract || i.op == Op::Insert) {
        os_ << "[" << i.aux << "]";
      }
      bool first = true;
      for (VarId v : i.in) {
        if (v == kNoVar) continue;
        os_ << (first ? " " : ", ") << operand(v);
        first = false;
      }
      if (i.blocks.empty()) {
        os_ << "\n";
        continue;
      }
      os_ << " {\n";
      block(i.blocks[0], depth + 1);
      if (i.blocks.size() > 1 && !i.blocks[1].empty()) {
        os_ << pad << "} else {\n";
        block(i.blocks[1], depth + 1);
      }
      os_ << pad << "}\n";
    }
  }

  const Kernel& k_;
  std::ostringstream os_;
};

}  // namespace

std::string to_string(const Kernel& k) {
  return Printer(k).run();
}

bool kernel_log_enabled() {
  const char* v = std::getenv("EMBER_KERNEL_LOG");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

}  // namespace ember::kernel
