// Backend contract: conv functions. See core.hpp for the conventions.
#pragma once

#include "ember/backend/core.hpp"

namespace ember {

// Required functions of this family are listed here with their contract and checked
// by the concept below; optional (composite) functions are detected by the front end
// with a requires-expression and fall back to a default written with core ops.
template <class B>
concept ConvBackend = CoreBackend<B>;

}  // namespace ember
