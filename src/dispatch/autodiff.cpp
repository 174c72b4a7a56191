// Dispatch: the autodiff functions (ember/backend/autodiff.hpp). Autodiff is a property of
// the device: a tensor on "cpu+autodiff" lives on an autodiff stack (AutodiffBackend<B>);
// on a plain stack the functions degrade as documented in dispatch.hpp.
#include "stacks.hpp"

namespace ember {

namespace {

using dispatch::Access;
using dispatch::BackendAt;
using dispatch::PrimAt;

template <class B>
concept AdStack = AutodiffBackend<B>;

/// Wraps `value`, a primitive of kind K of the stack that runs `device`, as a Dispatch
/// tensor on `device`.
template <class K, class V>
DispatchTensor<K> lift_on(const char* op, const Device& device, V&& value) {
  const std::uint8_t s = dispatch::stack_of(op, device);
  return dispatch::visit<DispatchTensor<K>>(s, [&]<std::size_t J>() -> DispatchTensor<K> {
    if constexpr (std::is_same_v<PrimAt<J, K>, std::remove_cvref_t<V>>) {
      return Access::make<K>(s, device, std::forward<V>(value));
    } else {
      detail::fail<DeviceError>(op, "device ", device.to_string(),
                                " does not run the inner backend of its autodiff stack");
    }
  });
}

[[noreturn]] void not_autodiff(const char* op, const Device& device) {
  detail::fail<DeviceError>(
      op, "tensor on device ", device.to_string(), " does not record gradients: create it on ",
      device.autodiff().to_string(), " (Device::", device_kind_name(device.kind()),
      "().autodiff()) or move it there");
}

void check_grads(const char* op, const Dispatch::F& t, const DispatchGradients& g) {
  if (!g.has_value()) detail::fail<ValueError>(op, "empty Gradients (default-constructed)");
  if (!(g.device() == t.device()) || Access::stack(g) != t.stack()) {
    detail::fail<DeviceError>(op, "gradients of a backward pass on device ", g.device().to_string(),
                              " asked for a tensor on device ", t.device().to_string());
  }
}

/// Runs `f.template operator()<B>(p)` on t's stack B when it is an autodiff stack, else
/// `plain()`.
template <class R, class Fn, class Plain>
R on_stack(const Dispatch::F& t, Fn&& f, Plain&& plain) {
  return dispatch::visit<R>(t.stack(), [&]<std::size_t I>() -> R {
    using B = BackendAt<I>;
    if constexpr (AdStack<B>) {
      return f.template operator()<B, I>(Access::get<PrimAt<I, Float>>(t));
    } else {
      return plain();
    }
  });
}

}  // namespace

Dispatch::F Dispatch::float_require_grad(const F& t) {
  return on_stack<F>(
      t,
      [&]<class B, std::size_t I>(const auto& p) {
        return Access::make<Float>(I, t.device(), B::float_require_grad(p));
      },
      [&]() -> F { not_autodiff("require_grad", t.device()); });
}

bool Dispatch::float_is_require_grad(const F& t) {
  return on_stack<bool>(
      t, []<class B, std::size_t I>(const auto& p) { return B::float_is_require_grad(p); },
      [] { return false; });
}

Dispatch::F Dispatch::float_detach(const F& t) {
  return on_stack<F>(
      t,
      [&]<class B, std::size_t I>(const auto& p) {
        return Access::make<Float>(I, t.device(), B::float_detach(p));
      },
      [&] { return t; });
}

Dispatch::Gradients Dispatch::float_backward(const F& t, bool create_graph) {
  return on_stack<Gradients>(
      t,
      [&]<class B, std::size_t I>(const auto& p) {
        return Access::make_gradients(I, t.device(), B::float_backward(p, create_graph));
      },
      [&]() -> Gradients { not_autodiff("backward", t.device()); });
}

std::optional<Dispatch::F> Dispatch::float_grad(const F& t, const Gradients& grads) {
  using R = std::optional<F>;
  check_grads("grad", t, grads);
  return on_stack<R>(
      t,
      [&]<class B, std::size_t I>(const auto& p) -> R {
        auto g = B::float_grad(p, Access::gradients<typename B::Gradients>(grads));
        if (!g) return std::nullopt;
        return lift_on<Float>("grad", t.device().without_autodiff(), std::move(*g));
      },
      [] { return R{}; });
}

std::optional<Dispatch::F> Dispatch::float_grad_graph(const F& t, const Gradients& grads) {
  using R = std::optional<F>;
  check_grads("grad_graph", t, grads);
  return on_stack<R>(
      t,
      [&]<class B, std::size_t I>(const auto& p) -> R {
        auto g = B::float_grad_graph(p, Access::gradients<typename B::Gradients>(grads));
        if (!g) return std::nullopt;
        return Access::make<Float>(I, t.device(), std::move(*g));
      },
      [] { return R{}; });
}

std::optional<Dispatch::F> Dispatch::float_grad_remove(const F& t, Gradients& grads) {
  using R = std::optional<F>;
  check_grads("grad_remove", t, grads);
  return on_stack<R>(
      t,
      [&]<class B, std::size_t I>(const auto& p) -> R {
        auto g = B::float_grad_remove(p, Access::gradients<typename B::Gradients>(grads));
        if (!g) return std::nullopt;
        return lift_on<Float>("grad_remove", t.device().without_autodiff(), std::move(*g));
      },
      [] { return R{}; });
}

void Dispatch::float_grad_replace(const F& t, Gradients& grads, F grad) {
  check_grads("grad_replace", t, grads);
  const Device inner = t.device().without_autodiff();
  if (!(grad.device() == inner)) {
    detail::fail<DeviceError>("grad_replace", "the gradient of a tensor on ",
                              t.device().to_string(), " must be on ", inner.to_string(), ", got ",
                              grad.device().to_string());
  }
  on_stack<int>(
      t,
      [&]<class B, std::size_t I>(const auto& p) {
        using IP = typename B::InnerBackend::FloatTensor;
        dispatch::visit<int>(grad.stack(), [&]<std::size_t J>() {
          if constexpr (std::is_same_v<PrimAt<J, Float>, IP>) {
            B::float_grad_replace(p, Access::gradients<typename B::Gradients>(grads),
                                  Access::get<IP>(grad));
          } else {
            detail::fail<DeviceError>("grad_replace", "device ", inner.to_string(),
                                      " does not run the inner backend of ",
                                      t.device().to_string());
          }
          return 0;
        });
        return 0;
      },
      [&]() -> int { not_autodiff("grad_replace", t.device()); });
}

Dispatch::F Dispatch::float_inner(const F& t) {
  return float_to_device(t, t.device().without_autodiff());
}
Dispatch::I Dispatch::int_inner(const I& t) {
  return int_to_device(t, t.device().without_autodiff());
}
Dispatch::Bo Dispatch::bool_inner(const Bo& t) {
  return bool_to_device(t, t.device().without_autodiff());
}
Dispatch::F Dispatch::float_from_inner(const F& t) {
  return t.device().is_autodiff() ? t : float_to_device(t, t.device().autodiff());
}
Dispatch::I Dispatch::int_from_inner(const I& t) {
  return t.device().is_autodiff() ? t : int_to_device(t, t.device().autodiff());
}
Dispatch::Bo Dispatch::bool_from_inner(const Bo& t) {
  return t.device().is_autodiff() ? t : bool_to_device(t, t.device().autodiff());
}

}  // namespace ember
