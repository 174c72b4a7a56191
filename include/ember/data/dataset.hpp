// Datasets (Burn's burn-dataset): a `Dataset<Item>` is a read-only, indexable collection of
// items, and wrappers build new datasets out of existing ones without copying items.
//
//   auto train = std::make_shared<data::InMemoryDataset<Sample>>(samples);
//   auto parts = data::random_split<Sample>(train, std::vector<double>{0.9, 0.1}, 42);
//   auto augmented = data::mapped(parts[0], [](Sample s) { return flip(s); });
//
// Datasets are shared through std::shared_ptr<const Dataset<Item>>; the data loader reads
// them from several worker threads at once, so `get` must be safe to call concurrently
// (every dataset here is, provided the wrapped datasets and mapping functions are).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/data/rng.hpp"

namespace ember::data {

/// A read-only collection of `len()` items, indexed from 0.
template <class Item>
class Dataset {
 public:
  using item_type = Item;

  virtual ~Dataset() = default;

  /// Item `index`, or nullopt when index >= len(). May throw (IoError for a file that cannot
  /// be decoded, or whatever a mapping function throws). Safe to call from several threads.
  virtual std::optional<Item> get(std::size_t index) const = 0;

  /// The number of items.
  virtual std::size_t len() const = 0;

  /// True when the dataset has no items.
  bool empty() const { return len() == 0; }

  /// Item `index`; throws ValueError "[dataset] index 7 is out of range for a dataset of
  /// 5 items" when `get` returns nullopt.
  Item at(std::size_t index) const {
    std::optional<Item> item = get(index);
    if (!item) {
      ember::detail::fail<ValueError>("dataset", "index ", index,
                                      " is out of range for a dataset of ", len(), " items");
    }
    return std::move(*item);
  }
};

/// Shared handle to a dataset, as the wrappers and the data loader hold them.
template <class Item>
using DatasetPtr = std::shared_ptr<const Dataset<Item>>;

namespace detail {
template <class Item>
DatasetPtr<Item> require_dataset(DatasetPtr<Item> dataset, const char* op) {
  if (!dataset) ember::detail::fail<ValueError>(op, "the dataset is null");
  return dataset;
}
}  // namespace detail

/// Items held in a std::vector (Burn's InMemDataset). `get` returns a copy.
template <class Item>
class InMemoryDataset final : public Dataset<Item> {
 public:
  explicit InMemoryDataset(std::vector<Item> items) : items_(std::move(items)) {}

  std::optional<Item> get(std::size_t index) const override {
    if (index >= items_.size()) return std::nullopt;
    return items_[index];
  }
  std::size_t len() const override { return items_.size(); }

  /// The items, in order.
  const std::vector<Item>& items() const { return items_; }

 private:
  std::vector<Item> items_;
};

/// Applies `fn` to each item of `source` when it is read (Burn's MapperDataset). `fn` is
/// called once per `get`, from any loader thread, so it must be thread-safe.
template <class In, class Out>
class MapperDataset final : public Dataset<Out> {
 public:
  /// Throws ValueError when `source` is null.
  MapperDataset(DatasetPtr<In> source, std::function<Out(In)> fn)
      : source_(detail::require_dataset(std::move(source), "mapper_dataset")), fn_(std::move(fn)) {}

  std::optional<Out> get(std::size_t index) const override {
    std::optional<In> item = source_->get(index);
    if (!item) return std::nullopt;
    return fn_(std::move(*item));
  }
  std::size_t len() const override { return source_->len(); }

 private:
  DatasetPtr<In> source_;
  std::function<Out(In)> fn_;
};

/// `MapperDataset` with the output type deduced from `fn`:
/// `auto floats = mapped(images, [](ImageU8 im) { return to_float(im); });`
template <class In, class Fn>
auto mapped(DatasetPtr<In> source, Fn fn) {
  using Out = std::decay_t<std::invoke_result_t<Fn&, In>>;
  return std::make_shared<MapperDataset<In, Out>>(std::move(source),
                                                  std::function<Out(In)>(std::move(fn)));
}
/// Overload for a shared_ptr to a concrete dataset class.
template <class D, class Fn>
requires std::is_base_of_v<Dataset<typename D::item_type>, D>
auto mapped(std::shared_ptr<D> source, Fn fn) {
  return mapped<typename D::item_type>(DatasetPtr<typename D::item_type>(std::move(source)),
                                       std::move(fn));
}

/// Items [start, end) of `source` (Burn's PartialDataset); index i reads source item
/// start + i.
template <class Item>
class PartialDataset final : public Dataset<Item> {
 public:
  /// Throws ValueError when source is null or unless start <= end <= source->len().
  PartialDataset(DatasetPtr<Item> source, std::size_t start, std::size_t end)
      : source_(detail::require_dataset(std::move(source), "partial_dataset")),
        start_(start),
        end_(end) {
    if (start > end || end > source_->len()) {
      ember::detail::fail<ValueError>("partial_dataset", "range [", start, ", ", end,
                                      ") is not inside a dataset of ", source_->len(), " items");
    }
  }

  std::optional<Item> get(std::size_t index) const override {
    if (index >= len()) return std::nullopt;
    return source_->get(start_ + index);
  }
  std::size_t len() const override { return end_ - start_; }

 private:
  DatasetPtr<Item> source_;
  std::size_t start_, end_;
};

/// The items of `source` in a fixed random order: a permutation drawn once from `seed` at
/// construction (Burn's ShuffledDataset). The same seed gives the same order.
template <class Item>
class ShuffledDataset final : public Dataset<Item> {
 public:
  /// Throws ValueError when source is null.
  ShuffledDataset(DatasetPtr<Item> source, std::uint64_t seed)
      : source_(detail::require_dataset(std::move(source), "shuffled_dataset")),
        order_(permutation(source_->len(), seed)) {}

  std::optional<Item> get(std::size_t index) const override {
    if (index >= order_.size()) return std::nullopt;
    return source_->get(order_[index]);
  }
  std::size_t len() const override { return order_.size(); }

  /// The source index of each item: get(i) reads source item order()[i].
  const std::vector<std::size_t>& order() const { return order_; }

 private:
  DatasetPtr<Item> source_;
  std::vector<std::size_t> order_;
};

/// Splits `source` into disjoint random parts of the given sizes (PyTorch's random_split):
/// the items are shuffled once with `seed`, then cut into consecutive parts. Throws
/// ValueError unless the sizes add up to source->len().
template <class Item>
std::vector<DatasetPtr<Item>> random_split(DatasetPtr<Item> source,
                                           const std::vector<std::size_t>& sizes,
                                           std::uint64_t seed) {
  source = detail::require_dataset(std::move(source), "random_split");
  std::size_t total = 0;
  for (std::size_t s : sizes) total += s;
  if (total != source->len()) {
    ember::detail::fail<ValueError>("random_split", "part sizes add up to ", total,
                                    " but the dataset has ", source->len(), " items");
  }
  auto shuffled = std::make_shared<ShuffledDataset<Item>>(source, seed);
  std::vector<DatasetPtr<Item>> parts;
  std::size_t start = 0;
  for (std::size_t s : sizes) {
    parts.push_back(std::make_shared<PartialDataset<Item>>(shuffled, start, start + s));
    start += s;
  }
  return parts;
}

/// `random_split` with fractions of the length (e.g. {0.8, 0.2}). Each part gets
/// floor(fraction * len) items and the remaining items go one each to the first parts, as
/// PyTorch does. Throws ValueError when a fraction is negative or they do not add up to 1
/// (within 1e-6).
template <class Item>
std::vector<DatasetPtr<Item>> random_split(DatasetPtr<Item> source,
                                           const std::vector<double>& fractions,
                                           std::uint64_t seed) {
  source = detail::require_dataset(std::move(source), "random_split");
  double sum = 0.0;
  for (double f : fractions) {
    if (!(f >= 0.0)) {
      ember::detail::fail<ValueError>("random_split", "fraction ", f, " is negative");
    }
    sum += f;
  }
  if (fractions.empty() || sum < 1.0 - 1e-6 || sum > 1.0 + 1e-6) {
    ember::detail::fail<ValueError>("random_split", "fractions add up to ", sum, ", expected 1");
  }
  const std::size_t n = source->len();
  std::vector<std::size_t> sizes;
  std::size_t assigned = 0;
  for (double f : fractions) {
    sizes.push_back(static_cast<std::size_t>(f * static_cast<double>(n)));
    assigned += sizes.back();
  }
  for (std::size_t i = 0; assigned < n; i = (i + 1) % sizes.size(), ++assigned) ++sizes[i];
  return random_split<Item>(std::move(source), sizes, seed);
}

/// The concatenation of several datasets (Burn's ComposedDataset): the items of parts[0],
/// then those of parts[1], ...
template <class Item>
class ComposedDataset final : public Dataset<Item> {
 public:
  /// Throws ValueError when a part is null.
  explicit ComposedDataset(std::vector<DatasetPtr<Item>> parts) : parts_(std::move(parts)) {
    std::size_t total = 0;
    for (const auto& p : parts_) {
      detail::require_dataset(p, "composed_dataset");
      total += p->len();
      ends_.push_back(total);
    }
  }

  std::optional<Item> get(std::size_t index) const override {
    auto it = std::upper_bound(ends_.begin(), ends_.end(), index);
    if (it == ends_.end()) return std::nullopt;
    const auto part = static_cast<std::size_t>(it - ends_.begin());
    const std::size_t start = part == 0 ? 0 : ends_[part - 1];
    return parts_[part]->get(index - start);
  }
  std::size_t len() const override { return ends_.empty() ? 0 : ends_.back(); }

 private:
  std::vector<DatasetPtr<Item>> parts_;
  std::vector<std::size_t> ends_;  // ends_[p]: one past the last index of part p
};

/// `size` items drawn at random from `source` (Burn's SamplerDataset), fixed at
/// construction by `seed`. With replacement, each item is an independent uniform draw.
/// Without replacement, the items are consecutive random permutations of the source (the
/// first len items are a permutation, so no source item repeats before all were drawn).
template <class Item>
class SamplerDataset final : public Dataset<Item> {
 public:
  /// Throws ValueError when source is null, or empty while size > 0.
  SamplerDataset(DatasetPtr<Item> source, std::size_t size, bool with_replacement,
                 std::uint64_t seed)
      : source_(detail::require_dataset(std::move(source), "sampler_dataset")) {
    const std::size_t n = source_->len();
    if (n == 0 && size > 0) {
      ember::detail::fail<ValueError>("sampler_dataset", "cannot draw ", size,
                                      " items from an empty dataset");
    }
    indices_.reserve(size);
    if (with_replacement) {
      Rng rng(seed);
      for (std::size_t i = 0; i < size; ++i) indices_.push_back(rng.below(n));
    } else {
      for (std::uint64_t block = 0; indices_.size() < size; ++block) {
        for (std::size_t j : permutation(n, mix(seed, block))) {
          if (indices_.size() == size) break;
          indices_.push_back(j);
        }
      }
    }
  }

  std::optional<Item> get(std::size_t index) const override {
    if (index >= indices_.size()) return std::nullopt;
    return source_->get(indices_[index]);
  }
  std::size_t len() const override { return indices_.size(); }

  /// The source index of each item.
  const std::vector<std::size_t>& indices() const { return indices_; }

 private:
  DatasetPtr<Item> source_;
  std::vector<std::size_t> indices_;
};

/// Sliding windows of `size` consecutive items (Burn's WindowsDataset): item i is
/// {source[i], ..., source[i + size - 1]}; there are len - size + 1 windows (0 when the
/// source is shorter than a window).
template <class Item>
class WindowsDataset final : public Dataset<std::vector<Item>> {
 public:
  /// Throws ValueError when source is null or size is 0.
  WindowsDataset(DatasetPtr<Item> source, std::size_t size)
      : source_(detail::require_dataset(std::move(source), "windows_dataset")), size_(size) {
    if (size == 0) ember::detail::fail<ValueError>("windows_dataset", "window size must be > 0");
  }

  std::optional<std::vector<Item>> get(std::size_t index) const override {
    if (index >= len()) return std::nullopt;
    std::vector<Item> window;
    window.reserve(size_);
    for (std::size_t k = 0; k < size_; ++k) {
      std::optional<Item> item = source_->get(index + k);
      if (!item) return std::nullopt;
      window.push_back(std::move(*item));
    }
    return window;
  }
  std::size_t len() const override {
    const std::size_t n = source_->len();
    return n < size_ ? 0 : n - size_ + 1;
  }

  /// The number of items per window.
  std::size_t window_size() const { return size_; }

 private:
  DatasetPtr<Item> source_;
  std::size_t size_;
};

}  // namespace ember::data
