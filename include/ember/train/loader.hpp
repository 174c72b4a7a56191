// The data the Learner and the Evaluator read: any loader with ember::data::DataLoader's
// shape, type-erased by the batch type.
//
//   train::BatchLoader<data::ImageBatch<>> loader = data_loader;   // a data::DataLoader
//
// A loader `L` qualifies (BatchLoaderLike) when `l.iter(epoch)` (epoch: std::size_t) returns
// an object whose `next()` gives `std::optional<Batch>` (nullopt at the end of the epoch),
// and `l.num_batches()` / `l.num_items()` give the batches and items of an epoch. The Learner
// calls iter(e) with the 0-based epoch index, so a loader that shuffles with a seed per epoch
// makes every run (and every resumed run) see the same order.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace ember::train {

/// The batch type of a loader: T for a loader whose epochs' next() return std::optional<T>.
template <class L>
using loader_batch_t = typename std::remove_cvref_t<
    decltype(std::declval<
                 std::remove_cvref_t<decltype(std::declval<const L&>().iter(std::size_t{0}))>&>()
                 .next())>::value_type;

/// A loader with ember::data::DataLoader's interface (see the file comment).
template <class L>
concept BatchLoaderLike = std::copy_constructible<std::remove_cvref_t<L>> &&
    requires(const std::remove_cvref_t<L>& l, std::size_t epoch) {
  l.iter(epoch).next();
  typename loader_batch_t<L>;
  { l.num_batches() } -> std::convertible_to<std::size_t>;
  { l.num_items() } -> std::convertible_to<std::size_t>;
};

/// Any BatchLoaderLike loader of `Batch`, by value (copies share the underlying loader).
template <class Batch>
class BatchLoader {
 public:
  /// One pass over the data (movable).
  class Epoch {
   public:
    /// The interface an epoch of the wrapped loader is held through.
    struct Impl {
      virtual ~Impl() = default;
      virtual std::optional<Batch> next() = 0;
    };
    explicit Epoch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

    /// The next batch; nullopt at the end. Rethrows what the loader throws.
    std::optional<Batch> next() { return impl_->next(); }

   private:
    std::unique_ptr<Impl> impl_;
  };

  BatchLoader() = default;

  /// Wraps `loader` (copied).
  template <class L>
  requires(BatchLoaderLike<L> && !std::same_as<std::remove_cvref_t<L>, BatchLoader> &&
           std::same_as<loader_batch_t<L>, Batch>)
      BatchLoader(L loader)  // NOLINT(google-explicit-constructor): any loader converts
      : impl_(std::make_shared<Model<std::remove_cvref_t<L>>>(std::move(loader))) {}

  /// Starts epoch `epoch` (0-based; seeds the loader's shuffling).
  Epoch iter(std::size_t epoch) const { return Epoch(impl_->iter(epoch)); }
  /// Batches per epoch.
  std::size_t num_batches() const { return impl_->num_batches(); }
  /// Items per epoch.
  std::size_t num_items() const { return impl_->num_items(); }
  /// False for a default-constructed BatchLoader (no loader).
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual std::unique_ptr<typename Epoch::Impl> iter(std::size_t epoch) const = 0;
    virtual std::size_t num_batches() const = 0;
    virtual std::size_t num_items() const = 0;
  };
  template <class L>
  struct Model final : Concept {
    explicit Model(L l) : loader(std::move(l)) {}
    using Inner = std::remove_cvref_t<decltype(std::declval<const L&>().iter(std::size_t{0}))>;
    struct EpochImpl final : Epoch::Impl {
      explicit EpochImpl(Inner e) : epoch(std::move(e)) {}
      std::optional<Batch> next() override { return epoch.next(); }
      Inner epoch;
    };
    std::unique_ptr<typename Epoch::Impl> iter(std::size_t epoch) const override {
      return std::make_unique<EpochImpl>(loader.iter(epoch));
    }
    std::size_t num_batches() const override { return loader.num_batches(); }
    std::size_t num_items() const override { return loader.num_items(); }
    L loader;
  };
  std::shared_ptr<const Concept> impl_;
};

}  // namespace ember::train
