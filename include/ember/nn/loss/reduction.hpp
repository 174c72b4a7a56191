// Loss reductions and the checks shared by the losses of ember::nn::loss.
//
// Every loss of ember::nn::loss computes one loss per element (or per sample) and then
// reduces them as PyTorch's `reduction=` argument does:
//   Reduction::Mean       the mean (some losses divide by a weight sum instead; see each one)
//   Reduction::Sum        the sum
//   Reduction::None       the per-element losses
//   Reduction::BatchMean  the sum divided by the batch size (kl_div only, as in PyTorch)
// The functions returning Tensor<B, 1> give [1] for Mean / Sum / BatchMean and, for None,
// the per-element losses flattened row-major to [numel]; every loss also has a
// `*_no_reduction` form that keeps the per-element shape (Burn's forward_no_reduction).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/module/param.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn::loss {

/// How the per-element losses are reduced (PyTorch's `reduction` strings in brackets):
/// Mean ("mean", the default), Sum ("sum"), None ("none"), BatchMean ("batchmean", kl_div
/// only: sum / batch size).
enum class Reduction : std::uint8_t { Mean, Sum, None, BatchMean };

/// PyTorch's name of a reduction: "mean", "sum", "none", "batchmean".
inline const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
    case Reduction::None:
      return "none";
    case Reduction::BatchMean:
      return "batchmean";
  }
  return "mean";
}

/// Parses PyTorch's reduction strings ("mean", "sum", "none", "batchmean"). Throws
/// ValueError "[reduction] ..." for any other string.
inline Reduction parse_reduction(std::string_view s) {
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None, Reduction::BatchMean}) {
    if (s == reduction_name(r)) return r;
  }
  ember::detail::fail<ValueError>("reduction", "unknown reduction '", s,
                                  "' (expected mean, sum, none or batchmean)");
}

inline std::ostream& operator<<(std::ostream& os, Reduction r) {
  return os << reduction_name(r);
}

/// JSON as PyTorch's string ("mean", ...) (nlohmann's ADL hooks; used by the configs).
template <class Json>
void to_json(Json& j, const Reduction& r) {
  j = reduction_name(r);
}
template <class Json>
void from_json(const Json& j, Reduction& r) {
  r = parse_reduction(j.template get<std::string>());
}

namespace detail {

/// Reduces per-element losses to [1] (Mean, Sum) or flattens them (None). BatchMean is
/// kl_div's own (handled there): any other loss throws ValueError naming `op`.
template <class B, std::size_t D>
Tensor<B, 1> reduce(const char* op, Tensor<B, D> losses, Reduction r) {
  switch (r) {
    case Reduction::Mean:
      return losses.mean();
    case Reduction::Sum:
      return losses.sum();
    case Reduction::None:
      return std::move(losses).template reshape<1>(Shape{losses.numel()});
    case Reduction::BatchMean:
      break;
  }
  ember::detail::fail<ValueError>(op,
                                  "reduction 'batchmean' is only defined for kl_div; use "
                                  "mean, sum or none");
}

/// Throws ValueError for Reduction::BatchMean (losses that do not define it).
inline void check_reduction(const char* op, Reduction r) {
  if (r == Reduction::BatchMean) {
    ember::detail::fail<ValueError>(op,
                                    "reduction 'batchmean' is only defined for kl_div; use "
                                    "mean, sum or none");
  }
}

/// Throws ShapeError unless `a` and `b` have the same shape.
template <class TA, class TB>
void check_same_shape(const char* op, const char* name_a, const TA& a, const char* name_b,
                      const TB& b) {
  if (a.shape() != b.shape()) {
    ember::detail::fail<ShapeError>(op, name_a, " of shape ", a.shape(), " and ", name_b,
                                    " of shape ", b.shape(), " must have the same shape");
  }
}

/// Throws ShapeError unless every dim of `w` equals the input's or is 1 (same rank).
template <class TW>
void check_broadcastable(const char* op, const char* name, const TW& w, const Shape& input) {
  const Shape s = w.shape();
  for (std::size_t d = 0; d < s.rank(); ++d) {
    if (s[d] != input[d] && s[d] != 1) {
      ember::detail::fail<ShapeError>(op, name, " of shape ", s,
                                      " does not broadcast to the input's shape ", input, " (dim ",
                                      d, ": ", s[d], " vs ", input[d], ")");
    }
  }
}

/// Throws ShapeError unless `w` is [n].
template <class TW>
void check_vector(const char* op, const char* name, const TW& w, std::int64_t n, const char* what) {
  if (w.shape() != Shape{n}) {
    ember::detail::fail<ShapeError>(op, name, " of shape ", w.shape(), " must be [", n, "] (", what,
                                    ")");
  }
}

/// Values of an Int tensor, read back to the host (to check ranges before the backend runs).
template <class B, std::size_t D>
std::vector<std::int64_t> host_ints(const Tensor<B, D, Int>& t) {
  return t.template to_vec<std::int64_t>();
}

/// "[i, j, ...]": the row-major position `flat` in `shape` (for error messages).
inline std::string position(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.rank());
  for (std::size_t d = shape.rank(); d-- > 0;) {
    const std::int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) {
    if (d) s += ", ";
    s += std::to_string(idx[d]);
  }
  return s + "]";
}

/// [1, .., n, .., 1] of rank D with `v`'s n elements along `dim` (per-class parameters).
template <std::size_t D, class B>
Tensor<B, D> along_dim(const Tensor<B, 1>& v, std::size_t dim) {
  std::array<std::int64_t, D> s{};
  s.fill(1);
  s[dim] = v.numel();
  return v.template reshape<D>(s);
}

/// x with the entries where x == 0 replaced by 1, so that log is finite there (and its
/// backward has no 0 * inf).
template <class B, std::size_t D>
Tensor<B, D> zeros_to_one(const Tensor<B, D>& x) {
  return x.mask_fill(x.equal_elem(0.0), 1.0);
}

/// A list of per-class weights on `device` as a Buffer [n] (PyTorch registers a loss
/// module's weights as buffers: "weight", "pos_weight").
template <class B>
std::optional<Buffer<Tensor<B, 1>>> weight_buffer(const std::optional<std::vector<double>>& w,
                                                  const typename B::Device& device) {
  if (!w) return std::nullopt;
  const auto n = static_cast<std::int64_t>(w->size());
  return Buffer<Tensor<B, 1>>(
      Tensor<B, 1>::from_data(TensorData(*w, Shape{n}), device, DType::F32));
}

/// The value of an optional Buffer (nullopt when absent or empty).
template <class B>
std::optional<Tensor<B, 1>> buffer_value(const std::optional<Buffer<Tensor<B, 1>>>& b) {
  if (!b || !b->has_value()) return std::nullopt;
  return b->val();
}

/// Throws ValueError "[op] ..." unless every weight is finite and >= 0 and the list is not
/// empty.
inline void check_weight_list(const char* op, const char* name,
                              const std::optional<std::vector<double>>& w) {
  if (!w) return;
  if (w->empty()) ember::detail::fail<ValueError>(op, name, " must not be empty");
  for (double v : *w) {
    if (!(std::isfinite(v) && v >= 0.0))
      ember::detail::fail<ValueError>(op, name, " must be finite and >= 0, got ", v);
  }
}

/// True for a Tensor<B2, D, K> whose backend B2 is not B.
template <class T, class B>
inline constexpr bool is_tensor_of_other_backend_v = false;
template <class B2, std::size_t D, class K, class B>
inline constexpr bool is_tensor_of_other_backend_v<Tensor<B2, D, K>, B> = !std::is_same_v<B2, B>;
template <class...>
inline constexpr bool dependent_false_v = false;

}  // namespace detail
}  // namespace ember::nn::loss

/// Inside a loss module `template <Backend B = Dispatch> struct Name`: forward /
/// forward_no_reduction called with tensors of another backend (Tensor<Cpu, 2> given to a
/// module made for Dispatch) stop the compilation with a message that says how to make the
/// module for that backend, instead of a page of failed template deductions.
#define EMBER_NN_LOSS_OTHER_BACKEND_(Name)                                               \
  template <class T_, class... Rest_>                                                    \
  requires ::ember::nn::loss::detail::is_tensor_of_other_backend_v<T_, B>                \
  void forward(const T_&, const Rest_&...) const {                                       \
    static_assert(::ember::nn::loss::detail::dependent_false_v<T_>,                      \
                  "[" #Name                                                              \
                  "] the tensors are of another backend than this loss module: loss "    \
                  "modules default to Dispatch; make it for your tensors' backend with " \
                  ".init<YourBackend>() (e.g. " #Name                                    \
                  "Config{}.init<Cpu>()), or call the "                                  \
                  "function of ember::nn::loss, which takes any backend");               \
  }                                                                                      \
  template <class T_, class... Rest_>                                                    \
  requires ::ember::nn::loss::detail::is_tensor_of_other_backend_v<T_, B>                \
  void forward_no_reduction(const T_&, const Rest_&...) const {                          \
    static_assert(::ember::nn::loss::detail::dependent_false_v<T_>,                      \
                  "[" #Name                                                              \
                  "] the tensors are of another backend than this loss module: loss "    \
                  "modules default to Dispatch; make it for your tensors' backend with " \
                  ".init<YourBackend>() (e.g. " #Name "Config{}.init<Cpu>())");          \
  }

/// The forward members of a loss module over an input and a target of one shape, inside
/// `template <Backend B> struct ...` with a `reduction` field: forward(input, target) with
/// the module's reduction, forward(input, target, r) (Burn's signature) and
/// forward_no_reduction (the per-element shape). They call `fn(input, target, reduction,
/// settings...)` and `fn_no_reduction(input, target, settings...)`.
#define EMBER_NN_LOSS_FORWARD_(fn, ...)                                                            \
  template <std::size_t D>                                                                         \
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D>& target) const {              \
    return fn(input, target, reduction __VA_OPT__(, ) __VA_ARGS__);                                \
  }                                                                                                \
  template <std::size_t D>                                                                         \
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D>& target, Reduction r) const { \
    return fn(input, target, r __VA_OPT__(, ) __VA_ARGS__);                                        \
  }                                                                                                \
  template <std::size_t D>                                                                         \
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& input, const Tensor<B, D>& target) const { \
    return fn##_no_reduction(input, target __VA_OPT__(, ) __VA_ARGS__);                            \
  }
