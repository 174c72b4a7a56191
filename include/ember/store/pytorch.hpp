// Reading PyTorch `.pt` / `.pth` files written by `torch.save(obj)` (the zip format of
// torch >= 1.6) without Python.
//
// The archive holds `<name>/data.pkl`, a pickle of `obj` in which every tensor is a call of
// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...) and every storage a
// persistent id ('storage', torch.<Type>Storage, key, location, numel) whose bytes are the
// record `<name>/data/<key>`. A restricted unpickler rebuilds that object as plain values
// (no code is run); the tensors are then copied out of their storages (any strides and
// offsets, storages shared between tensors) as row-major TensorData.
//
// Storage classes: Double, Float, Half, BFloat16, Long, Int, Short, Char (i8), Byte (u8),
// Bool. Known callables: collections.OrderedDict, torch._utils._rebuild_tensor_v2 /
// _rebuild_tensor / _rebuild_parameter / _rebuild_parameter_with_state,
// torch._tensor._rebuild_from_type_v2, torch.Size, _codecs.encode. Calls of any other
// global give an opaque object, an error only if the part of the file being read holds one.
#pragma once

#include <filesystem>
#include <string>

#include "ember/store/tensors.hpp"

namespace ember::store {

struct PyTorchOptions {
  /// Which part of the pickled object to read. "" reads all of it: nested dicts, lists and
  /// tuples are flattened with dotted keys ({"model": {"fc.weight": t}, "step": 3} gives
  /// "model.fc.weight"; plain values such as ints and strings are skipped). A key such as
  /// "model" or "state_dict" (or a dotted path into nested dicts, "ema.model") reads only
  /// that sub-dict, with keys relative to it.
  std::string select;
};

/// Reads the tensors of a `torch.save`d dict (a state_dict or a checkpoint holding one), in
/// the pickled order. `metadata` of the result is empty.
/// Throws IoError "[read_pytorch] '<file>': <problem>" for a file that cannot be opened
/// ("'<file>' is a directory" for a folder), is not a zip archive or is truncated/corrupt
/// (libzip's reason given), lacks data.pkl or a data/<key> record, has a storage record of
/// the wrong size, a tensor view that reaches past its storage, malformed pickle data, or a
/// `select` key that does not exist (the available keys are listed). Also for pickles whose
/// shared (memoized) sub-objects would make flattening explode, each refused before any
/// tensor memory is allocated: "too many values to flatten" (more than max(10^6, size of
/// data.pkl) values along all paths), "too many key bytes to flatten" (the dotted keys over
/// max(256 MiB, 64 x data.pkl)), "too many tensor bytes" (more than 64 x the storage records
/// + 1 GiB).
/// Throws UnsupportedError for the legacy (pre-1.6) format, TorchScript archives, pickle
/// opcodes outside the supported set, storage classes without an Ember dtype (complex,
/// quantized), a whole pickled nn.Module or any other unknown object inside the part
/// being read (the class is named, with its key), a file holding a single tensor, and a
/// `select` entry that is not a dict (or list) of tensors.
NamedTensors read_pytorch(const std::filesystem::path& path, const PyTorchOptions& options = {});

}  // namespace ember::store
