// The part of the CUDA and GLSL generators that is the same: walking the IR, naming
// variables (one per lane), declarations and structured control flow. A dialect supplies
// types, literals, expressions of pure instructions and the statements of memory, subgroup
// and matrix instructions.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "ember/kernel/ir.hpp"
#include "ember/kernel/launch.hpp"

namespace ember::kernel::detail {

class CEmitter {
 public:
  explicit CEmitter(const Kernel& k) : k_(k), layout_(k) {}
  virtual ~CEmitter() = default;
  /// The whole source.
  std::string generate();

 protected:
  // ---- dialect ----
  /// Register type name of an element type (one token: "float", "u32", "uint", ...).
  virtual std::string type(Elem e) const = 0;
  /// A literal of element type e with the constant's value.
  virtual std::string literal(Elem e, double f, std::int64_t i) const = 0;
  /// Everything before the body statements (includes, declarations, the function header).
  virtual void prologue() = 0;
  virtual void epilogue() { line("}"); }
  /// Expression of lane `lane` of a pure instruction (not builtins or metadata).
  virtual std::string pure(const Inst& i, int lane) = 0;
  /// Expression of a builtin or metadata instruction (scalar u32).
  virtual std::string builtin(const Inst& i) = 0;
  /// Statements of a memory instruction (Load, Store, Atomic) or subgroup / matrix operation,
  /// or Barrier.
  virtual void special(const Inst& i) = 0;
  /// The statement that declares `name` of element type e, initialised to `expr`.
  virtual std::string declare(Elem e, const std::string& name, const std::string& expr) const {
    return type(e) + " " + name + " = " + expr + ";";
  }
  /// Wraps a float expression of a half type in the rounding to that type.
  virtual std::string round_half(Elem e, const std::string& x) const = 0;
  /// The value of `v` in lane `lane` (or lane ^ lane with `xor_lane`) of the subgroup.
  virtual std::string shuffle(const std::string& v, const std::string& lane,
                              bool xor_lane) const = 0;
  /// The header of the butterfly loop over offsets `o` = subgroup size / 2, ..., 1.
  virtual std::string butterfly_loop() const = 0;
  /// Sum, min or max of two values of e (the subgroup reductions' step).
  virtual std::string combine(Op op, Elem e, const std::string& a, const std::string& b) const = 0;

  /// Expressions written alike in both dialects (logic, comparisons, select, lane moves);
  /// empty for other instructions.
  std::string common_expr(const Inst& i, int lane) const;
  /// Subgroup reductions (a butterfly of shuffles) and shuffles.
  void subgroup(const Inst& i);

  // ---- shared helpers ----
  const Kernel& k() const { return k_; }
  const VarInfo& var(VarId v) const { return k_.vars[v]; }
  Type type_of(VarId v) const { return k_.vars[v].type; }
  /// The C name (or literal) of lane `lane` of v.
  std::string name(VarId v, int lane = 0) const;
  /// Declares the result of i lane by lane from per-lane expressions.
  void define(const Inst& i, const std::vector<std::string>& lanes);
  void line(const std::string& s);
  std::string fresh(const char* prefix) { return prefix + std::to_string(tmp_++); }
  /// First info word of argument a.
  std::uint32_t info_offset(VarId buffer_or_scalar) const;
  int depth_ = 1;

 private:
  void block(const Block& b);
  void inst(const Inst& i);

  const Kernel& k_;
  InfoLayout layout_;
  std::ostringstream out_;
  int tmp_ = 0;

 protected:
  std::ostringstream& out() { return out_; }
};

/// "1.5f"-style text of a float that reads back exactly ("%.9g" + suffix).
std::string float_text(float f, const char* suffix);
std::string double_text(double d, const char* suffix);

}  // namespace ember::kernel::detail
