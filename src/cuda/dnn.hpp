// cuDNN, NVIDIA's deep-learning primitives, as a convolution candidate of the CUDA backend
// (src/gpu/conv.cpp lets autotune choose between it and Ember's im2col + matrix product).
//
// cuDNN 9 is opened at run time with dlopen, never linked (with its engines it is about 1 GB;
// programs start and GPU bundles stay small without it). The first libcudnn.so.9 that loads
// is used: $EMBER_CUDNN_LIB (a file, or a folder holding libcudnn.so.9), libcudnn.so.9 from
// the loader's path (LD_LIBRARY_PATH, ldconfig), the toolkit Ember was built with (lib64 and
// lib), $CUDA_HOME and $CUDA_PATH (lib64), /usr/local/cuda/lib64, and beside NVRTC (pip's
// nvidia/cu13/lib, and its sibling nvidia/cudnn/lib). libcudnn.so.9 is a small shim that opens
// its sub-libraries from its own folder on first use; the three the convolution API needs
// (libcudnn_graph, libcudnn_ops, libcudnn_cnn) are opened here first, so a missing one is
// reported when loading rather than by the first convolution. Without cuDNN the candidate is
// simply absent.
//
// Internal to Ember (ember::cuda's sources and src/gpu/): no CUDA or cuDNN types here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/kernel/device.hpp"

namespace ember::cuda::dnn {

/// True when cuDNN is loaded (tried once, on the first call); otherwise `why` lists the
/// places tried or what is missing.
bool available(std::string* why = nullptr);
/// The file libcudnn.so.9 was loaded from ("" when missing).
std::string library_path();
/// cudnnGetVersion(): 91900 for 9.19.0 (0 when missing).
std::size_t version();

/// Which of the three convolution functions.
enum class ConvOp {
  Forward,         // y = conv(x, w)
  BackwardData,    // dx from dy and w
  BackwardFilter,  // dw from x and dy
};

/// One convolution (cross-correlation, as PyTorch's and Ember's): x [batch, in_channels, *in],
/// w [out_channels, in_channels / groups, *kernel], y [batch, out_channels, *out], all packed
/// (contiguous NCHW / NCDHW). `spatial` is 2 or 3: the dims used of each array (a 1-d
/// convolution is a 2-d one with a leading dim of 1).
struct ConvShape {
  int spatial = 2;
  std::int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  std::array<std::int64_t, 3> in{1, 1, 1}, kernel{1, 1, 1}, out{1, 1, 1};
  std::array<std::int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
};

/// A packed array in a buffer of a CUDA device, from element `offset`.
struct Operand {
  const kernel::BufferStorage* buffer = nullptr;
  std::uint64_t offset = 0;
};

/// Empty when cuDNN has an algorithm for `op` on this case, with elements of type `elem`, and a
/// workspace of at most 256 MiB; else why not (cuDNN missing, not a CUDA device, the type, a
/// dim beyond int32, or cuDNN's refusal). The plan (descriptors, algorithm, workspace size) is
/// cached per case and device: a later `conv` of the case reuses it.
std::string refusal(kernel::ComputeDevice& device, kernel::Elem elem, ConvOp op,
                    const ConvShape& shape);

/// Enqueues `op` on `device`'s stream: Forward writes y from x and w, BackwardData writes x
/// (dx) from y (dy) and w, BackwardFilter writes w (dw) from x and y (dy); the written array
/// is overwritten whole (beta = 0). Types: F32 (fp32 data and arithmetic with CUDNN_FMA_MATH:
/// no TF32, no tensor cores), F16 and BF16 (f32 accumulation, tensor cores allowed), F64.
/// The algorithm comes from cuDNN's heuristics (cudnnGet*Algorithm_v7: the first one that
/// runs with at most 256 MiB of workspace and, for f32/f64, plain FMA math), cached per case
/// and device; the workspace comes from the device's pool. UnsupportedError when `refusal`
/// is not empty; DeviceError naming the cuDNN status when a call fails.
void conv(kernel::ComputeDevice& device, kernel::Elem elem, ConvOp op, const ConvShape& shape,
          const Operand& x, const Operand& w, const Operand& y);

}  // namespace ember::cuda::dnn
