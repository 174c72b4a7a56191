// DataLoader (Burn's DataLoader): turns a dataset into batches, built in parallel by worker
// threads and delivered in order.
//
//   auto loader = data::DataLoaderBuilder(data::ImageBatcher<>(device))
//                     .batch_size(64).shuffle(42).num_workers(2).build(train);
//   for (std::size_t epoch = 0; epoch < 10; ++epoch) {
//     auto batches = loader.iter(epoch);
//     for (auto& batch : batches) { step(batch.images, batch.targets); }
//   }
//
// Order: without shuffle, batch k holds items [k * batch_size, (k + 1) * batch_size). With
// shuffle(seed), epoch e visits the items in permutation(len, mix(seed, e)) order: every
// item once per epoch, a different order each epoch, the same order for the same (seed,
// epoch) whatever the number of workers.
//
// Threads: an epoch starts `num_workers` threads (none: batches are built in the consumer's
// thread). A worker takes the next batch number, reads its items from the dataset, applies
// the augmentation, calls the batcher, and stores the batch; at most `prefetch` batches are
// in flight (being built or ready) at any time, plus the one the consumer holds. The dataset,
// the augmentation and the batcher are called from several threads at once.
//
// Errors: an exception thrown by the dataset, the augmentation or the batcher while building
// batch k is rethrown, unchanged, by the fetch that would have returned batch k (batches
// before it are delivered first). No batch after k is started. Abandoning an epoch (a
// `break`, an exception, destroying the Epoch) stops the workers: those in the middle of a
// batch finish it, then all threads are joined.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/data/dataset.hpp"
#include "ember/data/distributed.hpp"
#include "ember/data/rng.hpp"
#include "ember/data/scheduler.hpp"

namespace ember::data {

/// A function object that turns a vector of items into a batch, e.g. stacking images into
/// one tensor. Called concurrently from loader workers, so it must be thread-safe.
template <class F, class Item, class Batch>
concept Batcher = std::is_invocable_r_v<Batch, const F&, std::vector<Item>>;

/// Progress through one epoch: items and batches delivered to the consumer so far.
struct Progress {
  std::size_t items_done = 0;
  std::size_t items_total = 0;
  std::size_t batches_done = 0;
  std::size_t batches_total = 0;

  /// items_done / items_total in [0, 1] (1 for an empty epoch).
  double fraction() const {
    return items_total == 0 ? 1.0
                            : static_cast<double>(items_done) / static_cast<double>(items_total);
  }
};

/// Settings of a DataLoader (see DataLoaderBuilder for each field's meaning).
struct LoaderOptions {
  std::size_t batch_size = 1;
  std::optional<std::uint64_t> shuffle_seed;
  std::size_t num_workers = 0;
  std::size_t prefetch = 0;  // 0: 2 * num_workers (at least 1)
  bool drop_last = false;
  std::uint64_t augment_seed = 0;
  /// Data-parallel sharding: each epoch reads sampler->indices(len, epoch) instead of the
  /// whole dataset (exclusive with shuffle_seed; the sampler shuffles).
  std::optional<DistributedSampler> sampler{};
};

template <class Item, class Batch>
class DataLoader;

/// One pass over the data: an input range of batches. Movable, not copyable. Obtain it from
/// DataLoader::iter(epoch); its workers start when it is created and stop when it is
/// destroyed.
template <class Item, class Batch>
class Epoch {
  struct State;

 public:
  /// Input iterator over the batches; `*it` is the current batch (the consumer may move it
  /// out). Incrementing fetches the next batch and may throw what a worker threw.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    iterator() = default;
    Batch& operator*() const { return *epoch_->current(); }
    Batch* operator->() const { return &*epoch_->current(); }
    iterator& operator++() {
      epoch_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return !epoch_ || !epoch_->current(); }

   private:
    friend class Epoch;
    explicit iterator(Epoch* epoch) : epoch_(epoch) {}
    Epoch* epoch_ = nullptr;
  };

  Epoch(Epoch&&) noexcept = default;
  Epoch& operator=(Epoch&&) noexcept = default;
  ~Epoch() = default;

  /// Fetches the first batch (unless already fetched) and returns an iterator to it. Throws
  /// what a worker threw while building it.
  iterator begin() {
    if (!state_->started) advance();
    return iterator(this);
  }
  std::default_sentinel_t end() const { return {}; }

  /// The next batch, or nullopt at the end of the epoch (or after an error was thrown).
  /// Rethrows the exception a worker threw while building that batch.
  std::optional<Batch> next() {
    advance();
    if (!state_->current) return std::nullopt;
    return std::move(state_->current);
  }

  /// Items and batches delivered so far, out of this epoch's totals.
  Progress progress() const {
    Progress p;
    p.batches_done = state_->delivered.load(std::memory_order_relaxed);
    p.batches_total = state_->num_batches;
    p.items_total = state_->order.size();
    p.items_done = std::min(p.batches_done * state_->batch_size, p.items_total);
    return p;
  }

  /// The dataset index of each item, in delivery order (items of batch k are
  /// order()[k * batch_size ...]); with drop_last the incomplete tail is not included.
  const std::vector<std::size_t>& order() const { return state_->order; }

 private:
  friend class DataLoader<Item, Batch>;

  struct State {
    DatasetPtr<Item> dataset;
    std::function<Batch(std::vector<Item>)> batcher;
    std::function<Item(Item, Rng&)> augment;
    std::uint64_t augment_seed = 0;
    std::size_t epoch = 0;
    std::size_t batch_size = 1;
    std::size_t num_batches = 0;
    std::vector<std::size_t> order;
    std::vector<std::optional<Batch>> slots;
    std::optional<Batch> current;
    bool started = false;
    bool finished = false;
    std::atomic<std::size_t> delivered{0};
    std::unique_ptr<detail::BatchScheduler> scheduler;  // last: joined before the rest dies

    void build(std::size_t k) {
      const std::size_t first = k * batch_size;
      const std::size_t last = std::min(first + batch_size, order.size());
      std::vector<Item> items;
      items.reserve(last - first);
      for (std::size_t pos = first; pos < last; ++pos) {
        const std::size_t index = order[pos];
        Item item = dataset->at(index);
        if (augment) {
          Rng rng(mix(mix(augment_seed, epoch), index));
          item = augment(std::move(item), rng);
        }
        items.push_back(std::move(item));
      }
      slots[k % slots.size()].emplace(batcher(std::move(items)));
    }
  };

  explicit Epoch(std::unique_ptr<State> state) : state_(std::move(state)) {}

  std::optional<Batch>& current() const { return state_->current; }

  void advance() {
    State& s = *state_;
    s.started = true;
    s.current.reset();
    if (s.finished) return;
    const std::size_t k = s.delivered.load(std::memory_order_relaxed);
    if (k >= s.num_batches) {
      s.finished = true;
      s.scheduler.reset();  // joins the (idle) workers now rather than at destruction
      return;
    }
    try {
      s.scheduler->wait(k);
    } catch (...) {
      s.finished = true;
      throw;
    }
    std::optional<Batch>& slot = s.slots[k % s.slots.size()];
    s.current = std::move(slot);
    slot.reset();
    s.scheduler->release(k);
    s.delivered.store(k + 1, std::memory_order_relaxed);
  }

  std::unique_ptr<State> state_;
};

/// Batches a dataset for training (see the file comment). Cheap to copy (the dataset is
/// shared); each `iter(epoch)` is an independent pass.
template <class Item, class Batch>
class DataLoader {
 public:
  /// Prefer DataLoaderBuilder. Throws ValueError when dataset or batcher is null or
  /// batch_size is 0.
  DataLoader(DatasetPtr<Item> dataset, std::function<Batch(std::vector<Item>)> batcher,
             LoaderOptions options, std::function<Item(Item, Rng&)> augment = {})
      : dataset_(detail::require_dataset(std::move(dataset), "data_loader")),
        batcher_(std::move(batcher)),
        augment_(std::move(augment)),
        options_(options) {
    if (!batcher_) ember::detail::fail<ValueError>("data_loader", "the batcher is empty");
    if (options_.batch_size == 0) {
      ember::detail::fail<ValueError>("data_loader", "batch size must be > 0");
    }
    if (options_.prefetch == 0)
      options_.prefetch = std::max<std::size_t>(2 * options_.num_workers, 1);
    if (options_.sampler) {
      options_.sampler->validate();
      if (options_.shuffle_seed) {
        ember::detail::fail<ValueError>("data_loader",
                                        "shuffle and a DistributedSampler are exclusive (the "
                                        "sampler shuffles with its own seed)");
      }
    }
  }

  /// Starts epoch `epoch`: computes its item order, starts the workers, and returns the
  /// range of its batches. The epoch number seeds the shuffle and the augmentation.
  Epoch<Item, Batch> iter(std::size_t epoch = 0) const {
    using E = Epoch<Item, Batch>;
    auto state = std::make_unique<typename E::State>();
    state->dataset = dataset_;
    state->batcher = batcher_;
    state->augment = augment_;
    state->augment_seed = options_.augment_seed;
    state->epoch = epoch;
    state->batch_size = options_.batch_size;
    const std::size_t n = items_per_epoch();
    if (options_.sampler) {
      state->order = options_.sampler->indices(dataset_->len(), epoch);
    } else if (options_.shuffle_seed) {
      state->order = permutation(n, mix(*options_.shuffle_seed, epoch));
    } else {
      state->order.resize(n);
      for (std::size_t i = 0; i < n; ++i) state->order[i] = i;
    }
    state->num_batches = num_batches();
    state->order.resize(std::min(n, state->num_batches * options_.batch_size));
    state->slots.resize(options_.prefetch);
    typename E::State* raw = state.get();
    state->scheduler = std::make_unique<detail::BatchScheduler>(
        state->num_batches, options_.num_workers, options_.prefetch,
        [raw](std::size_t k) { raw->build(k); });
    return E(std::move(state));
  }

  /// Batches per epoch: ceil(n / batch_size), or floor with drop_last, where n is the
  /// dataset's length or, with a sampler, its num_samples(len).
  std::size_t num_batches() const {
    const std::size_t n = items_per_epoch(), b = options_.batch_size;
    return options_.drop_last ? n / b : (n + b - 1) / b;
  }
  /// Items per epoch (n, or num_batches * batch_size with drop_last).
  std::size_t num_items() const {
    return options_.drop_last ? num_batches() * options_.batch_size : items_per_epoch();
  }
  /// The dataset's length.
  std::size_t dataset_len() const { return dataset_->len(); }
  const LoaderOptions& options() const { return options_; }
  const DatasetPtr<Item>& dataset() const { return dataset_; }

 private:
  std::size_t items_per_epoch() const {
    const std::size_t len = dataset_->len();
    return options_.sampler ? options_.sampler->num_samples(len) : len;
  }

  DatasetPtr<Item> dataset_;
  std::function<Batch(std::vector<Item>)> batcher_;
  std::function<Item(Item, Rng&)> augment_;
  LoaderOptions options_;
};

/// Configures and builds a DataLoader (Burn's DataLoaderBuilder). The item and batch types
/// are deduced from a batcher that names them (`Item` and `Batch` member types), from a
/// lambda or function `Batch(std::vector<Item>)`, or given:
/// `DataLoaderBuilder<int, std::vector<int>>(fn)`.
template <class Item, class Batch>
class DataLoaderBuilder {
 public:
  template <class F>
  requires Batcher<F, Item, Batch>
  explicit DataLoaderBuilder(F batcher) : batcher_(std::move(batcher)) {}

  /// Items per batch (default 1). 0 is rejected by build().
  DataLoaderBuilder& batch_size(std::size_t n) {
    options_.batch_size = n;
    return *this;
  }
  /// Shuffle every epoch: epoch e uses permutation(len, mix(seed, e)). Default: in order.
  DataLoaderBuilder& shuffle(std::uint64_t seed) {
    options_.shuffle_seed = seed;
    return *this;
  }
  /// Worker threads building batches (default 0: built in the consumer's thread).
  DataLoaderBuilder& num_workers(std::size_t n) {
    options_.num_workers = n;
    return *this;
  }
  /// The most batches in flight (being built or ready) at once; default 2 * num_workers.
  DataLoaderBuilder& prefetch(std::size_t n) {
    options_.prefetch = n;
    return *this;
  }
  /// Read only this rank's shard of the dataset each epoch (data-parallel training; see
  /// DistributedSampler). Exclusive with shuffle(): build() throws ValueError when both are
  /// set, or when the sampler's rank is not below its num_replicas.
  DataLoaderBuilder& sampler(DistributedSampler sampler) {
    options_.sampler = sampler;
    return *this;
  }
  /// Drop the last batch when it would be smaller than batch_size (default false).
  DataLoaderBuilder& drop_last(bool on = true) {
    options_.drop_last = on;
    return *this;
  }
  /// A random per-item transformation applied by the workers before batching, e.g. a random
  /// crop and flip: `fn(item, rng)` gets a generator seeded with mix(mix(seed, epoch),
  /// dataset_index), so each epoch draws new augmentations, reproducibly.
  template <class F>
  requires std::is_invocable_r_v<Item, const F&, Item, Rng&> DataLoaderBuilder& augment(
      F fn, std::uint64_t seed = 0) {
    augment_ = std::move(fn);
    options_.augment_seed = seed;
    return *this;
  }

  /// The loader over `dataset`. Throws ValueError when the dataset is null or batch_size 0.
  DataLoader<Item, Batch> build(DatasetPtr<Item> dataset) const {
    return DataLoader<Item, Batch>(std::move(dataset), batcher_, options_, augment_);
  }
  /// Overload for a shared_ptr to a concrete dataset class.
  template <class D>
  requires std::is_base_of_v<Dataset<Item>, D> DataLoader<Item, Batch> build(
      std::shared_ptr<D> dataset)
  const { return build(DatasetPtr<Item>(std::move(dataset))); }

 private:
  std::function<Batch(std::vector<Item>)> batcher_;
  std::function<Item(Item, Rng&)> augment_;
  LoaderOptions options_;
};

namespace detail {

/// The item and batch types of a batcher's call signature `Batch(std::vector<Item>)` (the
/// vector by value, const& or &&), read from a function pointer or from the one
/// non-template operator() of a lambda / function object.
template <class Sig>
struct BatcherSignature {};
template <class R, class V>
struct BatcherSignature<R(V)> {
  using Vec = std::remove_cvref_t<V>;
  using Item = typename Vec::value_type;
  using Batch = std::remove_cvref_t<R>;
  static constexpr bool valid = std::is_same_v<Vec, std::vector<Item>>;
};
template <class R, class V>
struct BatcherSignature<R (*)(V)> : BatcherSignature<R(V)> {};
template <class R, class C, class V>
struct BatcherSignature<R (C::*)(V) const> : BatcherSignature<R(V)> {};
template <class R, class C, class V>
struct BatcherSignature<R (C::*)(V) const noexcept> : BatcherSignature<R(V)> {};

template <class F>
concept NamesBatchTypes = requires {
  typename F::Item;
  typename F::Batch;
};
template <class F>
concept DeducibleBatcher = !NamesBatchTypes<F> && requires {
  requires BatcherSignature<decltype(&F::operator())>::valid;
};
template <class F>
concept BatcherFunctionPointer = std::is_pointer_v<F> && requires {
  requires BatcherSignature<F>::valid;
};

}  // namespace detail

/// A batcher that names its types (`using Item = ...; using Batch = ...;`).
template <detail::NamesBatchTypes F>
DataLoaderBuilder(F) -> DataLoaderBuilder<typename F::Item, typename F::Batch>;
/// A lambda or function object whose operator() takes std::vector<Item> (by value, const&
/// or &&) and returns the batch: DataLoaderBuilder([](std::vector<int> v) { ... }).
/// (A generic lambda, `auto` parameter, cannot be read: give the types explicitly.)
template <detail::DeducibleBatcher F>
DataLoaderBuilder(F)
    -> DataLoaderBuilder<typename detail::BatcherSignature<decltype(&F::operator())>::Item,
                         typename detail::BatcherSignature<decltype(&F::operator())>::Batch>;
/// A plain function `Batch f(std::vector<Item>)`.
template <detail::BatcherFunctionPointer F>
DataLoaderBuilder(F) -> DataLoaderBuilder<typename detail::BatcherSignature<F>::Item,
                                          typename detail::BatcherSignature<F>::Batch>;

}  // namespace ember::data
