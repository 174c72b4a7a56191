// GPU tensors: dtypes, allocation, host <-> device copies, views.
#include <algorithm>
#include <cstring>

#include "ember/backend/views.hpp"
#include "ember/core/error.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/gpu/ops.hpp"

namespace ember {

bool GpuTensor::is_contiguous() const {
  return views::is_contiguous(shape, strides);
}

namespace gpu {

namespace {

std::size_t byte_count(const Shape& s, DType d) {
  return static_cast<std::size_t>(s.numel()) * dtype_size(d);
}

}  // namespace

kernel::Elem elem_of(DType d, const char* op) {
  switch (d) {
    case DType::F32:
      return kernel::Elem::F32;
    case DType::F16:
      return kernel::Elem::F16;
    case DType::BF16:
      return kernel::Elem::BF16;
    case DType::F64:
      return kernel::Elem::F64;
    case DType::I64:
      return kernel::Elem::I64;
    case DType::I32:
      return kernel::Elem::I32;
    case DType::U8:
      return kernel::Elem::U8;
    case DType::Bool:
      return kernel::Elem::Bool;
    default:
      throw UnsupportedError(std::string("[") + op + "] dtype " + std::string(dtype_name(d)) +
                             " has no GPU kernels (f32, f16, bf16, f64, i64, i32, u8, bool do)");
  }
}

bool native_dtype(DType d, const kernel::ComputeDevice& dev) {
  const auto& p = dev.properties();
  switch (d) {
    case DType::F32:
    case DType::I32:
    case DType::Bool:
      return true;
    case DType::F16:
      return p.f16;
    case DType::BF16:
      return p.bf16;
    case DType::F64:
      return p.f64;  // kernels with f64 exp, log, ... check f64_math (gpu::try_map)
    case DType::I64:
      return p.i64;
    case DType::U8:
      return p.u8;
    default:
      return false;
  }
}

GpuTensor empty(const Shape& shape, DType dtype, kernel::ComputeDevice& dev, int index) {
  GpuTensor t;
  // Every tensor owns a buffer (an empty one a minimal one), so its device is always known.
  t.buffer = dev.alloc(std::max<std::size_t>(byte_count(shape, dtype), 16));
  t.shape = shape;
  t.strides = shape.contiguous_strides();
  t.dtype = dtype;
  t.device = index;
  return t;
}

GpuTensor upload(const TensorData& data, kernel::ComputeDevice& dev, int index) {
  GpuTensor t = empty(data.shape(), data.dtype(), dev, index);
  if (!data.bytes().empty()) dev.write(t.buffer, 0, data.bytes().data(), data.bytes().size());
  return t;
}

GpuTensor upload(const CpuTensor& t, kernel::ComputeDevice& dev, int index) {
  if (t.is_contiguous()) {
    GpuTensor g = empty(t.shape, t.dtype, dev, index);
    const std::size_t bytes = byte_count(t.shape, t.dtype);
    if (bytes) dev.write(g.buffer, 0, t.raw(), bytes);
    return g;
  }
  return upload(cpu::CoreOps::into_data(t), dev, index);
}

std::pair<std::int64_t, std::int64_t> span_of(const GpuTensor& t) {
  std::int64_t lo = t.offset, hi = t.offset;
  if (t.numel() == 0) return {t.offset, t.offset - 1};
  for (std::size_t d = 0; d < t.shape.dims.size(); ++d) {
    const std::int64_t ext = (t.shape.dims[d] - 1) * t.strides[d];
    (ext < 0 ? lo : hi) += ext;
  }
  return {lo, hi};
}

CpuTensor download(const GpuTensor& t) {
  const auto [lo, hi] = span_of(t);
  const std::size_t es = dtype_size(t.dtype);
  const std::size_t count = hi >= lo ? static_cast<std::size_t>(hi - lo + 1) : 0;
  CpuTensor c;
  c.storage = std::make_shared<cpu::Storage>(std::max<std::size_t>(count * es, 1));
  c.shape = t.shape;
  c.strides = t.strides;
  c.offset = t.offset - lo;
  c.dtype = t.dtype;
  if (count)
    t.compute().read(t.buffer, static_cast<std::size_t>(lo) * es, c.storage->data(), count * es);
  return c;
}

TensorData into_data(const GpuTensor& t) {
  if (t.is_contiguous()) {
    std::vector<std::uint8_t> bytes(byte_count(t.shape, t.dtype));
    if (!bytes.empty())
      t.compute().read(t.buffer, static_cast<std::size_t>(t.offset) * dtype_size(t.dtype),
                       bytes.data(), bytes.size());
    return TensorData::from_bytes(std::move(bytes), t.shape, t.dtype);
  }
  return cpu::CoreOps::into_data(download(t));
}

GpuTensor copy(const GpuTensor& t) {
  if (native_dtype(t.dtype, t.compute())) {
    MapSpec spec{"copy", t.dtype, {}, [](auto in, auto) { return in[0]; }};
    return map(spec, std::span<const GpuTensor>(&t, 1), t.shape);
  }
  return upload(download(t), t.compute(), t.device);
}

GpuTensor contiguous(const GpuTensor& t) {
  return t.is_contiguous() ? t : copy(t);
}

GpuTensor packed(const GpuTensor& t) {
  const auto at = static_cast<std::size_t>(t.offset) * dtype_size(t.dtype);
  return t.is_contiguous() && at % 256 == 0 ? t : copy(t);
}

GpuTensor reshape(GpuTensor t, const Shape& shape) {
  GpuTensor c = contiguous(t);
  c.shape = shape;
  c.strides = shape.contiguous_strides();
  return c;
}

GpuTensor to_device(const GpuTensor& t, kernel::ComputeDevice& dev, int index) {
  if (&t.compute() == &dev) {
    GpuTensor c = t;
    c.device = index;
    return c;
  }
  return upload(download(t), dev, index);
}

MemoryStats memory_stats(kernel::ComputeDevice& dev) {
  const auto m = dev.memory_stats();
  return {static_cast<std::size_t>(m.bytes_in_use), static_cast<std::size_t>(m.peak_bytes_in_use),
          static_cast<std::size_t>(m.bytes_reserved - m.bytes_in_use)};
}

}  // namespace gpu
}  // namespace ember
