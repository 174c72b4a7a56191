// The default Fashion-MNIST CNN of issue 5 for the training-step benchmarks
// (bench_train_cnn.cpp on the CPU, gpu/bench_fusion_gpu.cpp on the GPUs).
#pragma once

#include <cstdint>

#include "ember/module/module.hpp"
#include "ember/nn/conv.hpp"
#include "ember/nn/dropout.hpp"
#include "ember/nn/linear.hpp"
#include "ember/nn/norm.hpp"
#include "ember/nn/pool.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/module/pool.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::bench {

/// The default CNN of issue 5: [N, 1, 28, 28] -> [N, 10] logits.
template <Backend B>
struct Cnn {
  nn::Conv2d<B> conv1;
  nn::BatchNorm<B> bn1;
  nn::Conv2d<B> conv2;
  nn::BatchNorm<B> bn2;
  nn::Linear<B> fc1;
  nn::Linear<B> fc2;
  nn::Dropout dropout;
  nn::MaxPool2d pool;
  EMBER_MODULE(conv1, bn1, conv2, bn2, fc1, fc2, dropout, pool)

  Tensor<B, 2> forward(const Tensor<B, 4>& x) const {
    auto h = pool.forward(activation::relu(bn1.forward(conv1.forward(x))));
    h = pool.forward(activation::relu(bn2.forward(conv2.forward(h))));
    auto f = activation::relu(fc1.forward(h.template flatten<2>(1, 3)));
    return fc2.forward(dropout.forward(f));
  }

  static Cnn init(const typename B::Device& d) {
    const auto conv = [&](std::int64_t in, std::int64_t out) {
      return nn::Conv2dConfig{.channels = {in, out},
                              .kernel_size = {3, 3},
                              .padding = nn::PaddingConfig2d::explicit_(1, 1)}
          .template init<B>(d);
    };
    return Cnn{conv(1, 32),
               nn::BatchNormConfig{.num_features = 32}.template init<B>(d),
               conv(32, 64),
               nn::BatchNormConfig{.num_features = 64}.template init<B>(d),
               nn::LinearConfig{.d_input = 3136, .d_output = 128}.template init<B>(d),
               nn::LinearConfig{.d_input = 128, .d_output = 10}.template init<B>(d),
               nn::DropoutConfig{.prob = 0.25}.init(),
               nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init()};
  }
};

}  // namespace ember::bench
