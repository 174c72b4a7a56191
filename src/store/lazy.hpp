// Weights files read tensor by tensor (store::WeightsReader, nn::load): the names, dtypes
// and shapes first, each tensor's bytes on demand into a buffer the caller reuses.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/store/pytorch.hpp"

namespace ember::store::internal {

struct LazyEntry {
  std::string name;
  DType dtype;
  Shape shape;
};

/// An open weights file. Every check that needs no tensor data has passed when it exists.
class LazyTensors {
 public:
  virtual ~LazyTensors() = default;
  /// Entry i's values into `out` (its byte buffer's capacity reused). Throws IoError.
  virtual void read(std::size_t i, TensorData& out) = 0;

  std::vector<LazyEntry> entries;
  std::map<std::string, std::string> metadata;
};

/// A safetensors file, mapped into memory; the header parsed and checked as read_safetensors.
std::unique_ptr<LazyTensors> open_safetensors_lazy(const std::filesystem::path& path);
/// A PyTorch file; the pickle parsed and every view checked as read_pytorch.
std::unique_ptr<LazyTensors> open_pytorch_lazy(const std::filesystem::path& path,
                                               const PyTorchOptions& options);

}  // namespace ember::store::internal
