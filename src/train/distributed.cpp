#include "ember/train/distributed.hpp"

#include <cstring>

namespace ember::train::detail {

namespace {

/// The ranks' tensors stacked along dim 0 (equal shapes, checked by all_gather).
TensorData concat_rows(const std::vector<TensorData>& parts) {
  const TensorData& first = parts.front();
  std::vector<std::int64_t> dims = first.shape().dims;
  if (dims.empty()) dims.push_back(1);
  dims[0] *= static_cast<std::int64_t>(parts.size());
  std::vector<std::uint8_t> bytes;
  bytes.reserve(first.bytes().size() * parts.size());
  for (const auto& p : parts) bytes.insert(bytes.end(), p.bytes().begin(), p.bytes().end());
  return TensorData::from_bytes(std::move(bytes), Shape(dims), first.dtype());
}

}  // namespace

MetricInput gather_metric_input(dist::ProcessGroup& pg, const MetricInput& input) {
  if (pg.world_size() == 1) return input;
  const TensorData head(std::vector<double>{static_cast<double>(input.batch_size),
                                            input.loss ? 1.0 : 0.0, input.loss.value_or(0.0),
                                            input.output ? 1.0 : 0.0, input.targets ? 1.0 : 0.0},
                        Shape({5}));
  const auto heads = pg.all_gather(head);
  MetricInput out;
  double items = 0, weighted_loss = 0;
  bool all_loss = true, all_output = true, all_targets = true;
  for (const auto& h : heads) {
    const auto v = h.as_span<double>();
    items += v[0];
    weighted_loss += v[0] * v[2];
    all_loss = all_loss && v[1] != 0;
    all_output = all_output && v[3] != 0;
    all_targets = all_targets && v[4] != 0;
  }
  out.batch_size = static_cast<std::size_t>(items);
  if (all_loss) out.loss = items > 0 ? weighted_loss / items : input.loss.value_or(0.0);
  if (all_output) out.output = concat_rows(pg.all_gather(*input.output));
  if (all_targets) out.targets = concat_rows(pg.all_gather(*input.targets));
  return out;
}

bool any_rank(dist::ProcessGroup& pg, bool flag) {
  if (pg.world_size() == 1) return flag;
  TensorData f(std::vector<std::int32_t>{flag ? 1 : 0}, Shape({1}));
  pg.all_reduce(f, dist::ReduceOp::Max);
  return f.as_span<std::int32_t>()[0] != 0;
}

}  // namespace ember::train::detail
