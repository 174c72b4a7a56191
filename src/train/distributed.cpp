#include "ember/train/distributed.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace ember::train::detail {

namespace {

// The fixed part every rank sends per batch (as doubles): batch size, loss (and whether there
// is one), the stop flag, and the dtype and dims of the outputs and the targets (-1: none).
enum Field : std::size_t {
  kItems,
  kHasLoss,
  kLoss,
  kStop,
  kOutDtype,
  kOutRank,
  kOutD0,
  kOutD1,
  kTgtDtype,
  kTgtRank,
  kTgtD0,
  kTgtD1,
  kFields
};

void describe(const TensorData* t, double* dtype, double* rank, double* d0, double* d1) {
  *dtype = t ? static_cast<double>(t->dtype()) : -1.0;
  *rank = t ? static_cast<double>(t->shape().rank()) : 0.0;
  *d0 = t && t->shape().rank() > 0 ? static_cast<double>(t->shape()[0]) : 0.0;
  *d1 = t && t->shape().rank() > 1 ? static_cast<double>(t->shape()[1]) : 0.0;
}

/// The ranks' tensors stacked along dim 0, from the gathered payloads.
TensorData stack(const std::vector<std::uint8_t>& payload, std::size_t stride, std::size_t offset,
                 std::size_t bytes, int world, const double* head) {
  std::vector<std::uint8_t> out;
  out.reserve(bytes * static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    const auto first = payload.begin() + static_cast<std::ptrdiff_t>(r * stride + offset);
    out.insert(out.end(), first, first + static_cast<std::ptrdiff_t>(bytes));
  }
  std::vector<std::int64_t> dims;
  const auto rank = static_cast<std::size_t>(head[1]);
  if (rank >= 1) dims.push_back(static_cast<std::int64_t>(head[2]) * world);
  if (rank >= 2) dims.push_back(static_cast<std::int64_t>(head[3]));
  if (rank == 0) dims.push_back(world);
  return TensorData::from_bytes(std::move(out), Shape(dims), static_cast<DType>(head[0]));
}

}  // namespace

GatheredInput gather_metric_input(dist::ProcessGroup& pg, const MetricInput& input,
                                  bool stop_requested) {
  const int world = pg.world_size();
  if (world == 1) return {input, stop_requested};
  const TensorData* out_t = input.output ? &*input.output : nullptr;
  const TensorData* tgt_t = input.targets ? &*input.targets : nullptr;
  for (const TensorData* t : {out_t, tgt_t}) {
    if (t != nullptr && t->shape().rank() > 2) {
      ember::detail::fail<ShapeError>("Learner",
                                      "data parallel metrics take outputs and targets "
                                      "of rank <= 2, got ",
                                      t->shape());
    }
  }
  std::array<double, kFields> head{};
  head[kItems] = static_cast<double>(input.batch_size);
  head[kHasLoss] = input.loss ? 1.0 : 0.0;
  head[kLoss] = input.loss.value_or(0.0);
  head[kStop] = stop_requested ? 1.0 : 0.0;
  describe(out_t, &head[kOutDtype], &head[kOutRank], &head[kOutD0], &head[kOutD1]);
  describe(tgt_t, &head[kTgtDtype], &head[kTgtRank], &head[kTgtD0], &head[kTgtD1]);
  std::vector<double> heads(kFields * static_cast<std::size_t>(world));
  pg.all_gather({reinterpret_cast<const std::uint8_t*>(head.data()), sizeof head},
                {reinterpret_cast<std::uint8_t*>(heads.data()), heads.size() * sizeof(double)});

  GatheredInput g;
  double items = 0, weighted_loss = 0;
  bool all_loss = true;
  for (int r = 0; r < world; ++r) {
    const double* h = heads.data() + static_cast<std::size_t>(r) * kFields;
    items += h[kItems];
    weighted_loss += h[kItems] * h[kLoss];
    all_loss = all_loss && h[kHasLoss] != 0;
    g.stop = g.stop || h[kStop] != 0;
    // Outputs and targets travel as raw bytes below: their dtypes and shapes must agree.
    if (!std::equal(h + kOutDtype, h + kFields, heads.data() + kOutDtype)) {
      ember::detail::fail<dist::DistError>(
          "Learner", "rank ", pg.rank(), " of ", world, ": the ranks' batches differ (rank ", r,
          " has outputs [", h[kOutD0], ", ", h[kOutD1], "] and ", h[kTgtD0], " targets, rank 0 [",
          heads[kOutD0], ", ", heads[kOutD1], "] and ", heads[kTgtD0],
          "); give every rank the same batch size (data::DistributedSampler)");
    }
  }
  g.input.batch_size = static_cast<std::size_t>(items);
  if (all_loss) g.input.loss = items > 0 ? weighted_loss / items : input.loss.value_or(0.0);
  const std::size_t out_bytes = out_t ? out_t->bytes().size() : 0;
  const std::size_t tgt_bytes = tgt_t ? tgt_t->bytes().size() : 0;
  const std::size_t stride = out_bytes + tgt_bytes;
  if (stride > 0) {
    std::vector<std::uint8_t> mine(stride);
    if (out_t) std::memcpy(mine.data(), out_t->bytes().data(), out_bytes);
    if (tgt_t) std::memcpy(mine.data() + out_bytes, tgt_t->bytes().data(), tgt_bytes);
    std::vector<std::uint8_t> payload(stride * static_cast<std::size_t>(world));
    pg.all_gather(mine, payload);
    if (out_t) g.input.output = stack(payload, stride, 0, out_bytes, world, &head[kOutDtype]);
    if (tgt_t)
      g.input.targets = stack(payload, stride, out_bytes, tgt_bytes, world, &head[kTgtDtype]);
  }
  return g;
}

bool any_rank(dist::ProcessGroup& pg, bool flag) {
  if (pg.world_size() == 1) return flag;
  float f = flag ? 1.0f : 0.0f;
  pg.all_reduce(std::span<float>(&f, 1), dist::ReduceOp::Max);
  return f != 0.0f;
}

}  // namespace ember::train::detail
