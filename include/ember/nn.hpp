// Everything of ember::nn in one include: the module system (Param, Buffer, EMBER_MODULE,
// EMBER_CONFIG, Initializer), every layer and loss, and the weights-file readers of
// ember::store (read_weights, read_safetensors, read_pytorch), whose result
// load_state_dict takes. Link ember::nn (it brings ember::store).
//
//   #include "ember/nn.hpp"
//   #include "ember/optim/optim.hpp"   // optimizers and LR schedulers (ember::optim)
#pragma once

#include "ember/module/config.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/module/param.hpp"
#include "ember/nn/activation.hpp"
#include "ember/nn/attention.hpp"
#include "ember/nn/conv.hpp"
#include "ember/nn/conv_transpose.hpp"
#include "ember/nn/deform_conv.hpp"
#include "ember/nn/dropout.hpp"
#include "ember/nn/embedding.hpp"
#include "ember/nn/interpolate.hpp"
#include "ember/nn/linear.hpp"
#include "ember/nn/loss.hpp"
#include "ember/nn/norm.hpp"
#include "ember/nn/padding.hpp"
#include "ember/nn/pixel_shuffle.hpp"
#include "ember/nn/pool.hpp"
#include "ember/nn/pos_encoding.hpp"
#include "ember/nn/rnn.hpp"
#include "ember/nn/transformer.hpp"
#include "ember/nn/unfold.hpp"
#include "ember/store/pytorch.hpp"
#include "ember/store/safetensors.hpp"
#include "ember/store/weights.hpp"
