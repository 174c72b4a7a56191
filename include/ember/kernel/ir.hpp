// The kernel IR (Burn's CubeCL IR): typed variables and structured instructions.
//
// A kernel is a function run by every thread of a grid of workgroups. Its body is a tree of
// instructions: straight-line instructions define SSA values (`Inst::out`), control flow
// instructions (If, For, Loop, IfInBounds) own nested blocks. Mutable locals, shared and
// local arrays and matrix fragments are variables written by instructions (Assign, Store,
// MatLoad, ...); SSA values are only read. A value may be used only in the block that
// defines it (after its definition) or in blocks nested there; `verify` checks this.
//
// Launch arguments (buffers and run-time scalars) are variables too, in `Kernel::args`
// order. Buffers carry a rank; their length, shape and strides are passed at launch (the
// "info" words, see launch.hpp), so one compiled kernel serves every shape of that rank.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/kernel/types.hpp"

namespace ember::kernel {

using VarId = std::uint32_t;
inline constexpr VarId kNoVar = 0xffffffffu;

enum class VarKind : std::uint8_t {
  Value,     // SSA value, defined once by an instruction
  Mutable,   // local variable: Assign writes, Read reads
  Constant,  // literal (all lanes equal)
  Scalar,    // run-time scalar argument
  Buffer,    // global memory argument
  Shared,    // workgroup shared array
  Local,     // per-thread array
  Matrix,    // matrix-unit fragment (per subgroup)
};

enum class Access : std::uint8_t { Read, Write, ReadWrite };
enum class MatrixUse : std::uint8_t { A, B, Acc };
enum class MatrixLayout : std::uint8_t { RowMajor, ColMajor };
enum class AtomicOp : std::uint8_t { Add, Min, Max, Exchange, CompareExchange };

/// Matrix fragment shape: A is m x k, B is k x n, Acc is m x n.
struct MatrixInfo {
  MatrixUse use = MatrixUse::A;
  std::uint8_t m = 16, n = 16, k = 16;
  MatrixLayout layout = MatrixLayout::RowMajor;  // of A/B fragments
};

struct VarInfo {
  VarKind kind = VarKind::Value;
  Type type;                          // element type; for arrays and buffers: the element, lanes 1
  std::string name;                   // arguments and user-named variables; may be empty
  double f = 0;                       // Constant value of a float type
  std::int64_t i = 0;                 // Constant value of an integer or bool type
  std::uint32_t rank = 0;             // Buffer: rank of its shape
  Access access = Access::ReadWrite;  // Buffer
  std::uint32_t length = 0;           // Shared / Local: elements
  MatrixInfo matrix;                  // Matrix
};

enum class Op : std::uint8_t {
  // builtins (no operands; aux = axis 0..2 where it applies)
  ThreadIdx,
  BlockIdx,
  BlockDim,
  GridDim,
  GlobalIdx,
  LocalLinearIdx,  // thread index within its workgroup, linearised (x fastest)
  AbsolutePos,     // global linear thread index over the whole 3-D grid
  SubgroupSize,
  LaneId,
  // buffer metadata (in0 = buffer; in1 = dim for Shape/Stride); u32
  BufLen,
  BufShape,
  BufStride,
  // unary
  Neg,
  Abs,
  Not,
  BitNot,
  Sqrt,
  Exp,
  Log,
  Log1p,
  Tanh,
  Erf,
  Sin,
  Cos,
  Floor,
  Ceil,
  Round,
  Trunc,
  Recip,
  IsNan,
  IsInf,
  // binary
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Min,
  Max,
  Pow,
  And,
  Or,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  // ternary
  Select,  // in0 ? in1 : in2 (per lane when in0 is a vector)
  Fma,     // in0 * in1 + in2
  // conversions and vectors
  Cast,
  Bitcast,
  Splat,    // scalar -> every lane
  Extract,  // in0[aux]
  Insert,   // in0 with lane aux = in1
  // memory
  Load,    // in0 = buffer/shared/local, in1 = index in units of `lanes` elements
  Store,   // in0 = memory, in1 = index, in2 = value
  Read,    // in0 = mutable
  Assign,  // in0 = mutable, in1 = value
  Atomic,  // aux = AtomicOp; in0 = buffer/shared, in1 = index, in2 = value,
           // in3 = comparand (CompareExchange); out = the old value
  // control flow
  If,    // in0 = cond; blocks[0] = then, blocks[1] = else
  For,   // out = induction value; in0 = start, in1 = end (exclusive), in2 = step (> 0)
  Loop,  // blocks[0] repeated until Break
  Break,
  Return,
  Barrier,     // workgroup execution + memory barrier
  IfInBounds,  // in0 = pos, in1 = len: blocks[0] when pos < len (elidable, see passes.hpp)
  // subgroup operations (all lanes of the subgroup must take part)
  SgSum,
  SgMin,
  SgMax,
  SgAll,
  SgAny,
  SgBroadcast,   // in0 value, in1 lane (uniform)
  SgShuffle,     // in0 value, in1 source lane
  SgShuffleXor,  // in0 value, in1 xor mask
  // matrix units (one fragment per subgroup)
  MatFill,   // in0 = fragment, in1 = value
  MatLoad,   // in0 = fragment, in1 = memory, in2 = element offset, in3 = row stride; aux = layout
  MatStore,  // in0 = memory, in1 = element offset, in2 = stride, in3 = fragment; aux = layout
  MatMma,    // in0 = D, in1 = A, in2 = B, in3 = C: D = A B + C
  Count_
};

/// "add", "exp", ...
const char* op_name(Op op);
/// True for instructions without side effects whose result depends only on their operands
/// (and builtins): candidates for folding, CSE and dead-code elimination.
bool is_pure(Op op);

struct Inst {
  Op op = Op::Add;
  VarId out = kNoVar;
  std::array<VarId, 4> in{kNoVar, kNoVar, kNoVar, kNoVar};
  std::uint32_t aux = 0;
  std::vector<std::vector<Inst>> blocks;
};
using Block = std::vector<Inst>;

/// A kernel: variables, arguments, workgroup size and body.
struct Kernel {
  std::string name;
  std::array<std::uint32_t, 3> workgroup{64, 1, 1};
  std::vector<VarInfo> vars;
  std::vector<VarId> args;  // Buffer and Scalar variables, in launch order
  Block body;
  /// Compile-time parameters the kernel was specialised with (name, value), for printing.
  std::vector<std::pair<std::string, std::string>> defines;
  /// Allow the compilers to contract a * b + c into one FMA (faster; results may then differ
  /// from the reference by an ulp or two). Off by default: every target rounds alike.
  bool contract = false;

  const VarInfo& var(VarId id) const { return vars.at(id); }
  std::uint32_t workgroup_threads() const { return workgroup[0] * workgroup[1] * workgroup[2]; }
};

/// Features a kernel uses (what a target must support to run it).
struct Features {
  bool f16 = false, bf16 = false, f64 = false, i64 = false, u8 = false;
  bool atomics = false, float_atomics = false, i64_atomics = false;
  bool subgroups = false, shared = false, barrier = false, matrix = false;
  bool f64_math = false;  // transcendental functions on f64
};
Features features(const Kernel& k);

/// Checks the kernel's structure (types of operands, definitions before uses, block scoping,
/// argument kinds); throws ValueError "[kernel <name>] ..." naming the instruction.
void verify(const Kernel& k);

/// Calls f(inst) for every instruction, depth first, parents before their blocks.
template <class F>
void for_each_inst(const Block& b, F&& f) {
  for (const Inst& i : b) {
    f(i);
    for (const Block& c : i.blocks) for_each_inst(c, f);
  }
}

/// A 64-bit FNV-1a hash, used for cache keys.
std::uint64_t hash64(std::string_view s, std::uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace ember::kernel
