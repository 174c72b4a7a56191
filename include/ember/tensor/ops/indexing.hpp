// Tensor front end: indexing methods, mixed into Tensor<B, D, K>.
//
// Burn's names and shapes; PyTorch's semantics where Burn is silent. All checks happen
// here. Index tensors are read back to the host (`into_data()`) to check their range before
// the backend is called - cheap on the CPU backend; PyTorch checks inside its kernels
// instead, which a device backend may do later. Out-of-range indices throw ShapeError
// naming the first bad index. Functional API: the ops return a new tensor and leave the
// input unchanged, except that an rvalue input that is the sole owner of its buffer is
// written in place (`y = std::move(x).mask_fill(m, 0)`).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/backend/indexing.hpp"
#include "ember/core/data.hpp"
#include "ember/core/slice.hpp"
#include "ember/ir/layout.hpp"
#include "ember/tensor/fwd.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/ops/value_check.hpp"

namespace ember::detail {

/// Which elements a triangular mask marks (Burn's TriPart).
enum class TriPart { Lower, Upper, Diagonal };

/// Throws ShapeError naming the first index of `idx` outside [0, size) (on an asynchronous
/// device at its next synchronisation: ember/tensor/ops/value_check.hpp).
template <class B, std::size_t DI>
void check_index_range(const char* op, const Tensor<B, DI, Int>& idx, std::int64_t size,
                       std::size_t dim, const Shape& shape) {
  check_values(
      op, idx, [&](const auto& t) { return outside(t, 0, size); },
      [&](std::int64_t v, std::size_t) {
        fail<ShapeError>(op, "index ", v, " is out of range for dim ", dim, " of size ", size,
                         " (tensor of shape ", shape, ")");
      });
}

template <class B, std::size_t D, class K>
class IndexingApi {
  using Self = Tensor<B, D, K>;
  using Prim = PrimitiveOf<B, K>;
  using IntPrim = typename B::IntTensor;
  using BoolPrim = typename B::BoolTensor;
  using Dev = typename B::Device;

 public:
  // ---- slices ----------------------------------------------------------------------------

  /// A copy with the region `slices` (as Tensor::slice; missing trailing dims take the whole
  /// dim) replaced by `values`, whose shape must equal the region's shape (Burn's
  /// slice_assign). `values` is converted to this tensor's dtype. Throws ShapeError for a
  /// shape mismatch, too many slices, a zero step or an out-of-range single index.
  Self slice_assign(const std::vector<Slice>& slices, const Self& values) const& {
    return Self(slice_assign_impl(meta(), self().primitive(), slices, values));
  }
  Self slice_assign(const std::vector<Slice>& slices, const Self& values) && {
    const Meta m = meta();
    return Self(slice_assign_impl(m, std::move(self()).into_primitive(), slices, values));
  }
  /// A copy with the region `slices` set to `value` (converted to the dtype). Throws as
  /// slice_assign.
  Self slice_fill(const std::vector<Slice>& slices, double value) const& {
    return Self(slice_fill_impl(meta(), self().primitive(), slices, value));
  }
  Self slice_fill(const std::vector<Slice>& slices, double value) && {
    const Meta m = meta();
    return Self(slice_fill_impl(m, std::move(self()).into_primitive(), slices, value));
  }

  // ---- select ------------------------------------------------------------------------------

  /// torch.index_select: [.., size, ..] + Int[n] -> [.., n, ..] (dim `dim` replaced).
  /// Indices must be in [0, size) (no negative indices, as PyTorch); duplicates allowed.
  /// Throws ShapeError for a bad dim or an out-of-range index (naming it).
  Self select(std::int64_t dim, const Tensor<B, 1, Int>& indices) const {
    const Shape s = self().shape();
    const std::size_t d = normalize_dim("select", dim, D);
    ir_infer(ir::Select{d}, self(), indices);
    check_index_range("select", indices, s[d], d, s);
    const auto& p = self().primitive();
    const auto& i = indices.primitive();
    if constexpr (std::is_same_v<K, Float>)
      return Self(B::float_select(p, d, i));
    else if constexpr (std::is_same_v<K, Int>)
      return Self(B::int_select(p, d, i));
    else
      return Self(B::bool_select(p, d, i));
  }

  /// torch.index_copy (Assign) / index_add (Add): out[.., indices[j], ..] (=|+=)
  /// values[.., j, ..]. `values` has this shape with dim `dim` of size n (converted to this
  /// dtype). Add accumulates duplicates; with Assign the last duplicate wins. Throws
  /// ShapeError (dim, index range, values shape), UnsupportedError for Add on Bool.
  Self select_assign(std::int64_t dim, const Tensor<B, 1, Int>& indices, const Self& values,
                     IndexUpdate up = IndexUpdate::Assign) const& {
    return Self(select_assign_impl(meta(), self().primitive(), dim, indices, values, up));
  }
  Self select_assign(std::int64_t dim, const Tensor<B, 1, Int>& indices, const Self& values,
                     IndexUpdate up = IndexUpdate::Assign) && {
    const Meta m = meta();
    return Self(
        select_assign_impl(m, std::move(self()).into_primitive(), dim, indices, values, up));
  }

  // ---- gather / scatter ----------------------------------------------------------------------

  /// torch.gather: out[i][j][k] = self[i][index[i][j][k]][k] (dim 1). Result has the index
  /// shape; index.size(d) <= self.size(d) for d != dim; values in [0, self.size(dim)).
  /// Throws ShapeError.
  Self gather(std::int64_t dim, const Tensor<B, D, Int>& indices) const {
    const Shape s = self().shape();
    const std::size_t d = normalize_dim("gather", dim, D);
    ir_infer(ir::Gather{d}, self(), indices);
    check_index_range("gather", indices, s[d], d, s);
    const auto& p = self().primitive();
    const auto& i = indices.primitive();
    if constexpr (std::is_same_v<K, Float>)
      return Self(B::float_gather(d, p, i));
    else if constexpr (std::is_same_v<K, Int>)
      return Self(B::int_gather(d, p, i));
    else
      return Self(B::bool_gather(d, p, i));
  }

  /// torch.scatter (Assign) / scatter_add (Add): out[i][index[i][j][k]][k] (=|+=)
  /// values[i][j][k] (dim 1). index.size(d) <= values.size(d) for all d and <= self.size(d)
  /// for d != dim; values are converted to this dtype. With Assign the last duplicate (in
  /// index order along dim) wins (PyTorch leaves it unspecified). Throws ShapeError,
  /// UnsupportedError for Add on Bool.
  Self scatter(std::int64_t dim, const Tensor<B, D, Int>& indices, const Self& values,
               IndexUpdate up = IndexUpdate::Assign) const& {
    return Self(scatter_impl(meta(), self().primitive(), dim, indices, values, up));
  }
  Self scatter(std::int64_t dim, const Tensor<B, D, Int>& indices, const Self& values,
               IndexUpdate up = IndexUpdate::Assign) && {
    const Meta m = meta();
    return Self(scatter_impl(m, std::move(self()).into_primitive(), dim, indices, values, up));
  }

  /// Burn's take (numpy.take along `dim`): [.., size, ..] + Int[i0..iDI) ->
  /// [.., i0..iDI, ..] of rank D - 1 + DI. Indices in [0, size). Throws ShapeError.
  template <std::size_t DI, std::size_t DO = D - 1 + DI>
  Tensor<B, DO, K> take(std::int64_t dim, const Tensor<B, DI, Int>& indices) const {
    static_assert(DO == D - 1 + DI, "take: output rank must be D - 1 + DI");
    const Shape s = self().shape(), is = indices.shape();
    const std::size_t d = normalize_dim("take", dim, D);
    check_index_range("take", indices, s[d], d, s);
    const auto flat = indices.template reshape<1>(Shape{indices.numel()});
    Self picked = select(static_cast<std::int64_t>(d), flat);
    Shape out;
    out.dims.assign(s.dims.begin(), s.dims.begin() + static_cast<std::ptrdiff_t>(d));
    out.dims.insert(out.dims.end(), is.dims.begin(), is.dims.end());
    out.dims.insert(out.dims.end(), s.dims.begin() + static_cast<std::ptrdiff_t>(d) + 1,
                    s.dims.end());
    return std::move(picked).template reshape<DO>(out);
  }

  // ---- masks --------------------------------------------------------------------------------

  /// torch.where(mask, values, self): values where mask is true, self elsewhere. `mask` and
  /// `values` broadcast to this shape (each dim equal or 1); values are converted to this
  /// dtype. Throws ShapeError.
  Self mask_where(const Tensor<B, D, Bool>& mask, const Self& values) const& {
    return Self(mask_where_impl(meta(), self().primitive(), mask, values));
  }
  Self mask_where(const Tensor<B, D, Bool>& mask, const Self& values) && {
    const Meta m = meta();
    return Self(mask_where_impl(m, std::move(self()).into_primitive(), mask, values));
  }
  /// torch.masked_fill: `value` (converted to the dtype) where mask is true. `mask`
  /// broadcasts to this shape. Throws ShapeError.
  Self mask_fill(const Tensor<B, D, Bool>& mask, double value) const& {
    return Self(mask_fill_impl(meta(), self().primitive(), mask, value));
  }
  Self mask_fill(const Tensor<B, D, Bool>& mask, double value) && {
    const Meta m = meta();
    return Self(mask_fill_impl(m, std::move(self()).into_primitive(), mask, value));
  }

  /// torch.masked_select: the elements where `mask` (broadcast to this shape) is true, in
  /// row-major order, as [n]. Throws ShapeError.
  Tensor<B, 1, K> mask_select(const Tensor<B, D, Bool>& mask) const {
    const Shape s = self().shape();
    ir::check::broadcast_to("mask_select", "mask", mask.shape(), s);
    Tensor<B, D, Bool> full = mask;
    if (mask.shape() != s)
      full = Tensor<B, D, Bool>::full(s, 0.0, self().device()).mask_fill(mask, 1.0);
    const Tensor<B, 1, Bool> flat_mask = std::move(full).template reshape<1>(Shape{s.numel()});
    const Tensor<B, 2, Int> where(B::bool_argwhere(flat_mask.primitive(), DType::I64));
    const auto idx = where.template reshape<1>(Shape{where.shape()[0]});
    return self().template reshape<1>(Shape{s.numel()}).select(0, idx);
  }

  /// Burn's nonzero: one Int[n] tensor per dim holding the coordinates of the non-zero
  /// (true) elements, row-major order (as torch.nonzero(as_tuple=True)).
  std::vector<Tensor<B, 1, Int>> nonzero() const {
    const Tensor<B, 2, Int> w = argwhere();
    const std::int64_t n = w.shape()[0];
    std::vector<Tensor<B, 1, Int>> out;
    out.reserve(D);
    for (std::size_t d = 0; d < D; ++d) {
      const auto col = Tensor<B, 1, Int>::from_ints({static_cast<std::int64_t>(d)}, w.device());
      out.push_back(w.select(1, col).template reshape<1>(Shape{n}));
    }
    return out;
  }
  /// torch.argwhere: Int[n, D] coordinates of the non-zero (true) elements, row-major.
  Tensor<B, 2, Int> argwhere() const {
    if constexpr (std::is_same_v<K, Bool>) {
      return Tensor<B, 2, Int>(B::bool_argwhere(self().primitive(), DType::I64));
    } else {
      return Tensor<B, 2, Int>(B::bool_argwhere(self().bool_().primitive(), DType::I64));
    }
  }

  // ---- triangles -------------------------------------------------------------------------------

  /// torch.tril on the last two dims: keeps elements with col - row <= diagonal, zeroes the
  /// rest (false for Bool).
  Self tril(std::int64_t diagonal = 0) const requires(D >= 2) {
    const Shape s = self().shape();
    return self().mask_fill(
        tri_mask_2d("tril", s[D - 2], s[D - 1], diagonal, TriPart::Lower, self().device()), 0.0);
  }
  /// torch.triu on the last two dims: keeps elements with col - row >= diagonal.
  Self triu(std::int64_t diagonal = 0) const requires(D >= 2) {
    const Shape s = self().shape();
    return self().mask_fill(
        tri_mask_2d("triu", s[D - 2], s[D - 1], diagonal, TriPart::Upper, self().device()), 0.0);
  }

  /// Burn's tril_mask: Bool of `shape` (last two dims are the matrix), TRUE where an element
  /// is OUTSIDE the lower triangle (col - row > offset) - the elements tril() zeroes, ready
  /// for mask_fill. Throws ShapeError for a bad shape.
  static Tensor<B, D, Bool> tril_mask(
      const Shape& shape, std::int64_t offset = 0,
      const Dev& device = Dev{}) requires(std::same_as<K, Bool>&& D >= 2) {
    return tri_mask("tril_mask", shape, offset, TriPart::Lower, device);
  }
  /// Burn's triu_mask: TRUE where col - row < offset (outside the upper triangle).
  static Tensor<B, D, Bool> triu_mask(
      const Shape& shape, std::int64_t offset = 0,
      const Dev& device = Dev{}) requires(std::same_as<K, Bool>&& D >= 2) {
    return tri_mask("triu_mask", shape, offset, TriPart::Upper, device);
  }
  /// Burn's diag_mask: TRUE everywhere except the diagonal col - row == offset.
  static Tensor<B, D, Bool> diag_mask(
      const Shape& shape, std::int64_t offset = 0,
      const Dev& device = Dev{}) requires(std::same_as<K, Bool>&& D >= 2) {
    return tri_mask("diag_mask", shape, offset, TriPart::Diagonal, device);
  }

  /// Identity matrix [n, n] (Burn's Tensor::eye; Float or Int). Throws ValueError for n < 0,
  /// DTypeError for a dtype of another kind.
  static Self eye(std::int64_t n, const Dev& device = Dev{},
                  DType dtype = std::is_same_v<K, Int>
                                    ? DType::I64
                                    : DType::F32) requires(D == 2 && !std::same_as<K, Bool>) {
    if (n < 0) fail<ValueError>("eye", "size must be >= 0, got ", n);
    Self::check_kind_dtype("eye", dtype);
    return Self::full(Shape{n, n}, 1.0, device, dtype)
        .mask_fill(tri_mask_2d("eye", n, n, 0, TriPart::Diagonal, device), 0.0);
  }

  // ---- one-hot ---------------------------------------------------------------------------------

  /// Burn's one_hot: [..] -> [.., num_classes] (rank D + 1, same kind and dtype), 1 at each
  /// value's position, 0 elsewhere. Float values are truncated to integers. Throws
  /// ValueError if num_classes <= 0 or a value is outside [0, num_classes).
  template <std::size_t D2 = D + 1>
  Tensor<B, D2, K> one_hot(std::int64_t num_classes) const requires(!std::same_as<K, Bool>) {
    static_assert(D2 == D + 1, "one_hot: output rank must be D + 1");
    return one_hot_impl<D2>("one_hot", num_classes, 1.0, 0.0, -1, false);
  }
  /// Burn's one_hot_fill (ONNX OneHot): the class dim of size num_classes is inserted at
  /// `axis` (in [-(D+1), D]); `on_value` at each value's class, `off_value` elsewhere.
  /// Negative values count from the end (-1 is class num_classes - 1). Throws ValueError if
  /// num_classes <= 0 or a value is outside [-num_classes, num_classes), ShapeError for a
  /// bad axis.
  template <std::size_t D2 = D + 1>
  Tensor<B, D2, K> one_hot_fill(std::int64_t num_classes, double on_value, double off_value,
                                std::int64_t axis = -1) const requires(!std::same_as<K, Bool>) {
    static_assert(D2 == D + 1, "one_hot_fill: output rank must be D + 1");
    return one_hot_impl<D2>("one_hot_fill", num_classes, on_value, off_value, axis, true);
  }

 protected:
  const Tensor<B, D, K>& self() const { return static_cast<const Tensor<B, D, K>&>(*this); }
  Tensor<B, D, K>& self() { return static_cast<Tensor<B, D, K>&>(*this); }

 private:
  struct Meta {
    Shape shape;
    DType dtype;
    Dev device;
  };
  Meta meta() const { return {self().shape(), self().dtype(), self().device()}; }
  static ir::TensorType type_of(const Meta& me) { return {me.shape, me.dtype}; }

  static Prim converted(const Self& values, DType dtype) {
    return values.dtype() == dtype ? values.primitive() : values.cast(dtype).primitive();
  }

  static Prim slice_assign_impl(const Meta& me, Prim p, const std::vector<Slice>& slices,
                                const Self& values) {
    const Shape s = me.shape;
    const auto ranges = resolve_slices("slice_assign", slices, s);
    ir_infer(ir::SliceAssign{ranges}, type_of(me), ir_type_as(values, me.dtype));
    Prim v = converted(values, me.dtype);
    if constexpr (std::is_same_v<K, Float>)
      return B::float_slice_assign(std::move(p), ranges, v);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_slice_assign(std::move(p), ranges, v);
    else
      return B::bool_slice_assign(std::move(p), ranges, v);
  }

  static Prim slice_fill_impl(const Meta& me, Prim p, const std::vector<Slice>& slices,
                              double value) {
    const auto ranges = resolve_slices("slice_fill", slices, me.shape);
    Shape region;
    for (const auto& r : ranges) region.dims.push_back(r.count);
    const Self v = Self::full(region, value, me.device, me.dtype);
    if constexpr (std::is_same_v<K, Float>)
      return B::float_slice_assign(std::move(p), ranges, v.primitive());
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_slice_assign(std::move(p), ranges, v.primitive());
    else
      return B::bool_slice_assign(std::move(p), ranges, v.primitive());
  }

  static Prim select_assign_impl(const Meta& me, Prim p, std::int64_t dim,
                                 const Tensor<B, 1, Int>& indices, const Self& values,
                                 IndexUpdate up) {
    const Shape s = me.shape;
    const std::size_t d = normalize_dim("select_assign", dim, D);
    ir_infer(ir::SelectAssign{d, up}, type_of(me), indices, ir_type_as(values, me.dtype));
    check_index_range("select_assign", indices, s[d], d, s);
    Prim v = converted(values, me.dtype);
    const auto& i = indices.primitive();
    if constexpr (std::is_same_v<K, Float>)
      return B::float_select_assign(std::move(p), d, i, v, up);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_select_assign(std::move(p), d, i, v, up);
    else
      return B::bool_select_assign(std::move(p), d, i, v, up);
  }

  static Prim scatter_impl(const Meta& me, Prim p, std::int64_t dim,
                           const Tensor<B, D, Int>& indices, const Self& values, IndexUpdate up) {
    const Shape s = me.shape;
    const std::size_t d = normalize_dim("scatter", dim, D);
    ir_infer(ir::Scatter{d, up}, type_of(me), indices, ir_type_as(values, me.dtype));
    check_index_range("scatter", indices, s[d], d, s);
    Prim v = converted(values, me.dtype);
    const auto& i = indices.primitive();
    if constexpr (std::is_same_v<K, Float>)
      return B::float_scatter(d, std::move(p), i, v, up);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_scatter(d, std::move(p), i, v, up);
    else
      return B::bool_scatter(d, std::move(p), i, v, up);
  }

  static Prim mask_where_impl(const Meta& me, Prim p, const Tensor<B, D, Bool>& mask,
                              const Self& values) {
    ir_infer(ir::MaskWhere{}, type_of(me), mask, ir_type_as(values, me.dtype));
    Prim v = converted(values, me.dtype);
    const auto& m = mask.primitive();
    if constexpr (std::is_same_v<K, Float>)
      return B::float_mask_where(std::move(p), m, v);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_mask_where(std::move(p), m, v);
    else
      return B::bool_mask_where(std::move(p), m, v);
  }

  static Prim mask_fill_impl(const Meta& me, Prim p, const Tensor<B, D, Bool>& mask, double value) {
    ir_infer(ir::MaskFill{value}, type_of(me), mask);
    const auto& m = mask.primitive();
    if constexpr (std::is_same_v<K, Float>)
      return B::float_mask_fill(std::move(p), m, value);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_mask_fill(std::move(p), m, value);
    else
      return B::bool_mask_fill(std::move(p), m, value);
  }

  /// Bool [1, .., 1, rows, cols] (rank D): Burn's mask for `part` (true = outside it).
  static Tensor<B, D, Bool> tri_mask_2d(const char* op, std::int64_t rows, std::int64_t cols,
                                        std::int64_t offset, TriPart part, const Dev& device) {
    if (rows < 0 || cols < 0) fail<ShapeError>(op, "negative matrix size ", rows, " x ", cols);
    std::vector<std::uint8_t> v(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        const std::int64_t k = j - i;
        const bool on = part == TriPart::Lower   ? k > offset
                        : part == TriPart::Upper ? k < offset
                                                 : k != offset;
        v[static_cast<std::size_t>(i * cols + j)] = on ? 1 : 0;
      }
    }
    std::vector<std::int64_t> dims(D, 1);
    dims[D - 2] = rows;
    dims[D - 1] = cols;
    return Tensor<B, D, Bool>::from_data(
        TensorData::from_bytes(std::move(v), Shape(std::move(dims)), DType::Bool), device);
  }

  static Tensor<B, D, Bool> tri_mask(const char* op, const Shape& shape, std::int64_t offset,
                                     TriPart part, const Dev& device) {
    Tensor<B, D, Bool>::check_new_shape(op, shape);
    auto m = tri_mask_2d(op, shape[D - 2], shape[D - 1], offset, part, device);
    if (m.shape() == shape) return m;
    return Tensor<B, D, Bool>::full(shape, 0.0, device).mask_fill(m, 1.0);
  }

  template <std::size_t D2>
  Tensor<B, D2, K> one_hot_impl(const char* op, std::int64_t num_classes, double on, double off,
                                std::int64_t axis, bool wrap_negative) const {
    if (num_classes <= 0) fail<ValueError>(op, "num_classes must be positive, got ", num_classes);
    const std::size_t ax = normalize_dim(op, axis, D2);
    const Meta me = meta();
    const Shape s = me.shape;
    std::vector<std::int64_t> vals = self().into_data().template to_vec<std::int64_t>();
    for (auto& v : vals) {
      if (wrap_negative && v < 0 && v >= -num_classes) v += num_classes;
      if (v < 0 || v >= num_classes) {
        if (wrap_negative) {
          fail<ValueError>(op, "index ", v, " is out of range for num_classes ", num_classes,
                           " (valid: ", -num_classes, " to ", num_classes - 1, ")");
        }
        fail<ValueError>(op, "index ", v, " is out of range: num_classes ", num_classes,
                         " must be greater than every index (valid: 0 to ", num_classes - 1, ")");
      }
    }
    // Indices with a size-1 dim inserted at `ax`, then scattered into `off` along `ax`.
    std::vector<std::int64_t> idims = s.dims, odims = s.dims;
    idims.insert(idims.begin() + static_cast<std::ptrdiff_t>(ax), 1);
    odims.insert(odims.begin() + static_cast<std::ptrdiff_t>(ax), num_classes);
    const auto dev = me.device;
    const auto idx = Tensor<B, D2, Int>::from_data(TensorData(std::move(vals), Shape(idims)), dev);
    const auto ons = Tensor<B, D2, K>::full(Shape(idims), on, dev, me.dtype);
    return Tensor<B, D2, K>::full(Shape(odims), off, dev, me.dtype)
        .scatter(static_cast<std::int64_t>(ax), idx, ons, IndexUpdate::Assign);
  }
};

}  // namespace ember::detail
