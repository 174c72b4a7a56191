// All of Autodiff<B>'s op definitions. Include this (in one translation unit, with explicit
// instantiations of the AdXxxOps<B> families, or everywhere) to use Autodiff with a backend
// other than Cpu; Autodiff<Cpu> is compiled into the ember_autodiff library.
#pragma once

#include "ember/autodiff/impl/conv.hpp"
#include "ember/autodiff/impl/core.hpp"
#include "ember/autodiff/impl/elementwise.hpp"
#include "ember/autodiff/impl/indexing.hpp"
#include "ember/autodiff/impl/layout.hpp"
#include "ember/autodiff/impl/linalg.hpp"
#include "ember/autodiff/impl/norm.hpp"
#include "ember/autodiff/impl/pool.hpp"
#include "ember/autodiff/impl/reduce.hpp"
