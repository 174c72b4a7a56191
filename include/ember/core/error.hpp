// Ember error types. Every check in the tensor front end throws one of these;
// library code never aborts the process.
//
// Messages start with "[op_name]" and name the offending shapes/dtypes, e.g.
//   "[add] shapes [2, 3] and [4, 3] are not broadcast-compatible (dim 0: 2 vs 4)".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace ember {

/// Base class of every exception thrown by Ember.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Shapes (or ranks, dims, indices into a dim) are incompatible with the op.
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// The dtype of an operand is not accepted by the op.
class DTypeError : public Error {
 public:
  using Error::Error;
};

/// Operands live on different devices, or the device is unknown/unavailable.
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// Reading or writing a file or stream failed (missing, truncated, corrupt).
class IoError : public Error {
 public:
  using Error::Error;
};

/// The op/option combination is valid but not implemented by this backend.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

/// An allocation failed (the tensor does not fit in the device's memory).
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

/// A value argument is out of its documented domain (e.g. negative size).
class ValueError : public Error {
 public:
  using Error::Error;
};

namespace detail {

template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

/// Throws `E` with the message "[op] <args...>".
template <class E, class... Args>
[[noreturn]] void fail(std::string_view op, Args&&... args) {
  throw E(concat("[", op, "] ", std::forward<Args>(args)...));
}

}  // namespace detail
}  // namespace ember
