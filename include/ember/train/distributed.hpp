// The Learner's data-parallel bookkeeping (used by learner.hpp when a process group is set):
// metric inputs combined across ranks and stop requests agreed by all ranks.
#pragma once

#include "ember/dist/process_group.hpp"
#include "ember/train/metric.hpp"

namespace ember::train::detail {

/// The metric input of the global batch: every rank's batch, rank 0's rows first (outputs and
/// targets concatenated along dim 0, the loss the item-weighted mean of the ranks' losses,
/// the batch size their sum). Every rank must call it with inputs of the same dtypes and
/// shapes (DistError otherwise). Returns `input` unchanged in a group of one.
MetricInput gather_metric_input(dist::ProcessGroup& pg, const MetricInput& input);

/// True on every rank when `flag` is true on any rank (an all_reduce max).
bool any_rank(dist::ProcessGroup& pg, bool flag);

}  // namespace ember::train::detail
