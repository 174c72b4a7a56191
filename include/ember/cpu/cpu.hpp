// ember::Cpu: the CPU backend (Ember's equivalent of Burn's NdArray/Flex backend).
//
// Strided storage with zero-copy views, f32/f64/i64/i32/u8/bool computed natively,
// f16/bf16 stored and computed through f32, multi-threaded kernels, BLAS-backed matmul.
// Each family of ops is declared in its own header (ops_<family>.hpp) and
// implemented in src/cpu/<family>*.cpp; `Cpu` gathers them.
#pragma once

#include "ember/backend/backend.hpp"
#include "ember/cpu/ops_activation.hpp"
#include "ember/cpu/ops_conv.hpp"
#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/ops_elementwise.hpp"
#include "ember/cpu/ops_indexing.hpp"
#include "ember/cpu/ops_layout.hpp"
#include "ember/cpu/ops_linalg.hpp"
#include "ember/cpu/ops_pool.hpp"
#include "ember/cpu/ops_reduce.hpp"

namespace ember {

struct Cpu : cpu::CoreOps,
             cpu::ElementwiseOps,
             cpu::LayoutOps,
             cpu::IndexingOps,
             cpu::ReduceOps,
             cpu::LinalgOps,
             cpu::ConvOps,
             cpu::PoolOps,
             cpu::ActivationOps {
  using Device = CpuDevice;
  using FloatTensor = CpuTensor;
  using IntTensor = CpuTensor;
  using BoolTensor = CpuTensor;
};

static_assert(Backend<Cpu>, "Cpu must satisfy the Backend concept");

}  // namespace ember
