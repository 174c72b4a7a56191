// Reading weights files of either supported format: the format chosen by extension or by
// content, an optional sub-dict selection and key remapping applied.
#pragma once

#include <filesystem>
#include <string>

#include "ember/store/tensors.hpp"

namespace ember::store {

enum class WeightsFormat { Safetensors, PyTorch };

/// The format of `path`: ".safetensors" is safetensors, ".pt" and ".pth" are PyTorch;
/// any other extension is sniffed from the first bytes (zip magic "PK\3\4" or a legacy
/// pickle -> PyTorch; an 8-byte length followed by '{' -> safetensors).
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

}  // namespace ember::store
