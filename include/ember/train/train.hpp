// Everything of ember::train in one include: the Learner and its builder, metrics, step
// outputs, loaders, checkpoints, history and summary, renderers and the Evaluator. Link
// ember::train.
//
//   #include "ember/train/train.hpp"
#pragma once

#include "ember/train/checkpoint.hpp"
#include "ember/train/evaluator.hpp"
#include "ember/train/history.hpp"
#include "ember/train/learner.hpp"
#include "ember/train/loader.hpp"
#include "ember/train/metric.hpp"
#include "ember/train/output.hpp"
#include "ember/train/renderer.hpp"
#include "ember/train/session.hpp"
