// Autocast's per-thread state (ember/core/autocast.hpp). Defined here, not in the header, so
// that every shared object of a program sees the one variable.
#include "ember/core/autocast.hpp"

#include "ember/core/error.hpp"

namespace ember {

namespace {
thread_local std::optional<DType> autocast_state;
}  // namespace

Autocast::Autocast(DType dtype, bool enabled) : previous_(autocast_state) {
  if (dtype != DType::F16 && dtype != DType::BF16) {
    detail::fail<ValueError>("Autocast", "the autocast dtype must be f16 or bf16, got ", dtype);
  }
  autocast_state = enabled ? std::optional<DType>(dtype) : std::nullopt;
}

Autocast::Autocast(std::optional<DType> dtype)
    : Autocast(dtype.value_or(DType::BF16), dtype.has_value()) {}

Autocast::~Autocast() {
  autocast_state = previous_;
}

std::optional<DType> autocast_dtype() noexcept {
  return autocast_state;
}

namespace detail {

DType autocast_lower_dtype(DType dt) noexcept {
  if (!autocast_state) return dt;
  return dt == DType::F32 || dt == DType::F16 || dt == DType::BF16 ? *autocast_state : dt;
}

DType autocast_widen_dtype(DType dt) noexcept {
  if (!autocast_state) return dt;
  return dt == DType::F16 || dt == DType::BF16 ? DType::F32 : dt;
}

}  // namespace detail

}  // namespace ember
