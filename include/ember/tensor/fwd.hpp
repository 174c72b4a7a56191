// Forward declarations for the tensor front end.
#pragma once

#include <cstddef>

#include "ember/backend/backend.hpp"

namespace ember {

template <class B, std::size_t D, class K = Float>
class Tensor;

template <class B, std::size_t D>
class QTensor;

struct QuantScheme;

}  // namespace ember
