// The CPU target: an interpreter that runs a chunk of workgroups in lock step, one IR
// instruction at a time over every thread of the chunk (the "lanes" of a wide SIMD machine).
//
// Each variable has a register column of N = threads-per-chunk entries (or one entry when it
// is uniform: constants, scalars, metadata and pure functions of those), so each instruction
// is a tight loop over N values that the compiler vectorises. Divergent control flow runs
// under a per-thread mask; barriers are free (every thread of the chunk is at the same
// instruction) and subgroups are groups of consecutive threads of a workgroup. Chunks of
// workgroups run in parallel on OpenMP threads; atomics on buffers are real atomics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ember/kernel/ir.hpp"
#include "ember/kernel/launch.hpp"

namespace ember::kernel::cpu {

/// Where each argument lives for one run.
struct RunArgs {
  Grid grid;
  const std::uint32_t* info = nullptr;  // the launch's info words
  std::vector<std::byte*> mem;          // per argument: first element (nullptr for scalars)
  std::vector<std::uint64_t> len;       // per argument: elements addressable
};

class Frame;

/// A kernel prepared for the interpreter.
class Program {
 public:
  /// `subgroup_size`: threads per subgroup; `chunk_threads`: about how many threads run in
  /// lock step (rounded to whole workgroups).
  Program(Kernel k, std::uint32_t subgroup_size, std::uint32_t chunk_threads = 2048);
  ~Program();
  /// Runs every workgroup of the grid. Throws DeviceError "[kernel <name>] ..." on an
  /// out-of-bounds access.
  void run(const RunArgs& args) const;
  const Kernel& kernel() const { return k_; }

 private:
  friend class Frame;
  Kernel k_;
  InfoLayout layout_;
  std::uint32_t subgroup_;       // S
  std::uint32_t wg_threads_;     // T
  std::uint32_t wgs_per_chunk_;  // workgroups run together
  std::uint32_t n_;              // threads per chunk
  std::vector<std::uint8_t> uniform_;
  std::vector<std::size_t> offset_;  // byte offset of each variable's storage in a frame
  std::vector<int> arg_of_;          // variable -> argument index, or -1
  std::size_t frame_bytes_ = 0;
};

}  // namespace ember::kernel::cpu
