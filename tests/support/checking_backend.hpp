// Checking<Inner>: a test decorator, built on the generated pass-through Forward, that runs
// every function of Inner and asserts that the op's description (ember/ir) infers exactly the
// shape and dtype Inner's result has. The conformance suite runs over Checking<Cpu>, so every
// shape rule in ir/ is checked against the CPU kernels on every conformance case.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "ember/backend/forward.hpp"
#include "infer_args.hpp"

namespace ember::test {

template <class Inner>
struct CheckingTypes {
  using FloatTensor = typename Inner::FloatTensor;
  using IntTensor = typename Inner::IntTensor;
  using BoolTensor = typename Inner::BoolTensor;
  using Device = typename Inner::Device;
  static constexpr bool forward_float = true;
};

/// Thrown when a description's infer disagrees with the backend's result.
struct InferMismatch : std::logic_error {
  using std::logic_error::logic_error;
};

template <class Inner>
struct Checking : Forward<Inner, CheckingTypes<Inner>, Checking<Inner>> {
  using Device = typename Inner::Device;
  using FloatTensor = typename Inner::FloatTensor;
  using IntTensor = typename Inner::IntTensor;
  using BoolTensor = typename Inner::BoolTensor;

  static std::string name() { return "checking_" + Inner::name(); }

  /// Runs the call and compares its result with the description's infer.
  template <class D, class R, class Call, class... A>
  static R run(const char* fn, Call call, A&&... a) {
    if constexpr (HasInfer<D>) {
      const auto want = infer_call<Inner, D>(a...);
      R r = call(std::forward<A>(a)...);
      compare(fn, want, r);
      return r;
    } else {
      return call(std::forward<A>(a)...);
    }
  }

 private:
  static void mismatch(const char* fn, const ir::TensorType& want, const ir::TensorType& got) {
    std::ostringstream os;
    os << "[checking] " << fn << ": infer gives " << want << ", the backend's result is " << got;
    throw InferMismatch(os.str());
  }
  template <class R>
  static void compare(const char* fn, const ir::TensorType& want, const R& r) {
    const ir::TensorType got = type_of<Inner>(r);
    if (!same_type(want, got)) mismatch(fn, want, got);
  }
  template <class R>
  static void compare(const char* fn, const ir::TensorTypes2& want, const R& r) {
    compare(fn, want.first, r.first);
    compare(fn, want.second, r.second);
  }
  /// An optional result (a fast path that may decline): checked when present.
  template <class R>
  static void compare(const char* fn, const ir::TensorTypes2& want, const std::optional<R>& r) {
    if (r) compare(fn, want, *r);
  }
  template <class R>
  static void compare(const char* fn, const std::vector<ir::TensorType>& want,
                      const std::vector<R>& r) {
    if (want.size() != r.size())
      throw InferMismatch(std::string("[checking] ") + fn + ": infer gives " +
                          std::to_string(want.size()) + " results, the backend " +
                          std::to_string(r.size()));
    for (std::size_t i = 0; i < r.size(); ++i) compare(fn, want[i], r[i]);
  }
};

}  // namespace ember::test
