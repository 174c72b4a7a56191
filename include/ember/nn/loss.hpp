// Every loss of ember::nn::loss (functional forms, modules and configs); see the headers in
// ember/nn/loss/ for each family.
#pragma once

#include "ember/nn/loss/binary_cross_entropy.hpp"
#include "ember/nn/loss/cross_entropy.hpp"
#include "ember/nn/loss/ctc.hpp"
#include "ember/nn/loss/kl_div.hpp"
#include "ember/nn/loss/margin.hpp"
#include "ember/nn/loss/reduction.hpp"
#include "ember/nn/loss/regression.hpp"
