// The Backend concept: the full contract, one concept per family of ops.
#pragma once

#include "ember/backend/activation.hpp"
#include "ember/backend/conv.hpp"
#include "ember/backend/core.hpp"
#include "ember/backend/elementwise.hpp"
#include "ember/backend/indexing.hpp"
#include "ember/backend/layout.hpp"
#include "ember/backend/linalg.hpp"
#include "ember/backend/pool.hpp"
#include "ember/backend/reduce.hpp"

namespace ember {

template <class B>
concept Backend = CoreBackend<B> && ElementwiseBackend<B> && LayoutBackend<B> &&
    IndexingBackend<B> && ReduceBackend<B> && LinalgBackend<B> && ConvBackend<B> &&
    PoolBackend<B> && ActivationBackend<B>;

}  // namespace ember
