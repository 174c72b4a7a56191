// The Learner's data-parallel bookkeeping (used by learner.hpp when a process group is set):
// metric inputs combined across ranks and stop requests agreed by all ranks.
#pragma once

#include "ember/dist/process_group.hpp"
#include "ember/train/metric.hpp"

namespace ember::train::detail {

/// What gather_metric_input returns: the global batch's metric input and whether any rank
/// asked to stop.
struct GatheredInput {
  MetricInput input;
  bool stop = false;
};

/// The metric input of the global batch: every rank's batch, rank 0's rows first (outputs and
/// targets, of rank <= 2, concatenated along dim 0; the loss the item-weighted mean of the
/// ranks' losses; the batch size their sum), and the OR of the ranks' `stop_requested`, in
/// two all_gathers. Throws DistError when the ranks' outputs or targets differ in dtype or
/// shape, ShapeError for a rank above 2. In a group of one, returns the arguments.
GatheredInput gather_metric_input(dist::ProcessGroup& pg, const MetricInput& input,
                                  bool stop_requested);

/// True on every rank when `flag` is true on any rank (an all_reduce max).
bool any_rank(dist::ProcessGroup& pg, bool flag);

}  // namespace ember::train::detail
