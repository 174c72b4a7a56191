// DistributedSampler (PyTorch's torch.utils.data.distributed.DistributedSampler): the part of
// a dataset that one rank of a data-parallel job reads each epoch.
//
//   auto loader = data::DataLoaderBuilder(batcher)
//                     .batch_size(32)
//                     .sampler(data::DistributedSampler{.num_replicas = pg->world_size(),
//                                                       .rank = pg->rank(), .seed = 42})
//                     .build(train);
//
// Epoch e: the indices 0..len-1, shuffled with permutation(len, mix(seed, e)) (the order a
// DataLoader with shuffle(seed) uses, so one replica reads exactly what that loader reads),
// are padded by repeating their beginning up to a multiple of num_replicas (or, with
// drop_last, cut down to one); rank r takes positions r, r + num_replicas, r + 2 num_replicas,
// ... Every rank gets num_samples(len) indices, so all ranks run the same number of batches.
// With batch size b per rank, global batch k (the union of the ranks' batches k) is the
// positions [k b R, (k + 1) b R) of the padded order: the batch a single process with batch
// size b R reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/data/rng.hpp"

namespace ember::data {

struct DistributedSampler {
  /// Processes sharing the dataset (the world size), >= 1.
  std::size_t num_replicas = 1;
  /// This process's rank, < num_replicas.
  std::size_t rank = 0;
  /// Reshuffle every epoch from `seed` (false: the dataset's order).
  bool shuffle = true;
  std::uint64_t seed = 0;
  /// Drop the tail that does not divide evenly instead of padding with repeated items.
  bool drop_last = false;

  /// ValueError when num_replicas is 0 or rank >= num_replicas.
  void validate() const {
    if (num_replicas == 0) {
      ember::detail::fail<ValueError>("DistributedSampler", "num_replicas must be >= 1");
    }
    if (rank >= num_replicas) {
      ember::detail::fail<ValueError>("DistributedSampler", "rank ", rank, " is outside [0, ",
                                      num_replicas, ")");
    }
  }
  /// Indices per rank and epoch: ceil(len / R), or floor(len / R) with drop_last.
  std::size_t num_samples(std::size_t len) const {
    validate();
    return drop_last ? len / num_replicas : (len + num_replicas - 1) / num_replicas;
  }
  /// This rank's dataset indices for `epoch`, in reading order (see the file comment).
  std::vector<std::size_t> indices(std::size_t len, std::size_t epoch) const {
    const std::size_t per_rank = num_samples(len);
    const std::size_t total = per_rank * num_replicas;
    std::vector<std::size_t> order;
    if (shuffle) {
      order = permutation(len, mix(seed, epoch));
    } else {
      order.resize(len);
      for (std::size_t i = 0; i < len; ++i) order[i] = i;
    }
    std::vector<std::size_t> out;
    out.reserve(per_rank);
    for (std::size_t pos = rank; pos < total && len > 0; pos += num_replicas) {
      out.push_back(order[pos % len]);  // positions past len repeat the beginning (padding)
    }
    return out;
  }
};

}  // namespace ember::data
