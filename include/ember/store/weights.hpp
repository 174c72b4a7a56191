// Reading weights files of either supported format: the format chosen by extension or by
// content, an optional sub-dict selection and key remapping applied.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/store/tensors.hpp"

namespace ember::store {

enum class WeightsFormat { Safetensors, PyTorch };

/// The format of `path` from its first bytes, whatever the extension (zip magic "PK\3\4" or
/// a legacy pickle -> PyTorch; an 8-byte length then '{' -> safetensors); when they are
/// neither, ".safetensors" / ".pt" / ".pth" pick the reader that then names the damage.
/// Throws IoError if the file cannot be opened ("[detect_format] '<path>' is a directory" for
/// a folder), or, for another extension, when the content is neither.
WeightsFormat detect_format(const std::filesystem::path& path);

struct ReadOptions {
  /// Reads only a part of the file, with keys relative to it: for PyTorch files the
  /// sub-dict of that name (PyTorchOptions::select), for safetensors the tensors whose
  /// names start with "<select>." (the prefix removed). "" reads everything.
  std::string select;
  /// Key renaming applied after selection (see KeyRemap).
  KeyRemap remap;
};

/// The tensors (and safetensors metadata) of `path`, in file order, after `select` and
/// `remap`. Throws what read_safetensors / read_pytorch / remap_keys throw, and IoError
/// when `select` matches nothing in a safetensors file.
NamedTensors read_weights(const std::filesystem::path& path, const ReadOptions& options = {});

namespace internal {
class LazyTensors;
}

/// A weights file (either format) read tensor by tensor, which is how nn::load fills a
/// module without holding the whole file in memory: opening reads and checks everything
/// but the tensor data (the safetensors header, the PyTorch pickle and its views, `select`
/// and `remap` applied to the names, with read_weights' errors), and read(i, out) then
/// copies one tensor's bytes into `out`, whose buffer is reused from call to call. A
/// safetensors file is mapped into memory (mmap) and each tensor copied from the page
/// cache; a PyTorch tensor that is its whole storage is read straight into `out`, and the
/// first read() checks every storage's CRC (one pass, nothing kept) before it returns.
class WeightsReader {
 public:
  /// Throws what read_weights throws, except errors in the tensor data itself (read()).
  explicit WeightsReader(const std::filesystem::path& path, const ReadOptions& options = {});
  ~WeightsReader();
  WeightsReader(WeightsReader&&) noexcept;
  WeightsReader& operator=(WeightsReader&&) noexcept;

  /// The number of tensors.
  std::size_t size() const;
  /// Name (after select and remap), dtype and shape of tensor i, in file order.
  const std::string& name(std::size_t i) const;
  DType dtype(std::size_t i) const;
  const Shape& shape(std::size_t i) const;
  /// The file's string metadata (safetensors `__metadata__`; empty for PyTorch files).
  const std::map<std::string, std::string>& metadata() const;
  /// Tensor i's values into `out` (replaced; its byte buffer's capacity is reused). Throws
  /// IoError for a corrupted PyTorch storage (CRC) or a failed read.
  void read(std::size_t i, TensorData& out);

 private:
  std::unique_ptr<internal::LazyTensors> impl_;
  std::vector<std::string> names_;
  std::vector<std::size_t> index_;  // tensor i is the file's entry index_[i]
};

}  // namespace ember::store
