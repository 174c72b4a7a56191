// ember::optim umbrella: optimizers, gradients, clipping, parameter groups, LR schedulers.
#pragma once

#include "ember/optim/adagrad.hpp"
#include "ember/optim/adam.hpp"
#include "ember/optim/config.hpp"
#include "ember/optim/gradients.hpp"
#include "ember/optim/lr_scheduler.hpp"
#include "ember/optim/optimizer.hpp"
#include "ember/optim/rmsprop.hpp"
#include "ember/optim/sgd.hpp"
