// safetensors: Ember's native weights format (the Hugging Face format, also written by
// Python's `safetensors.torch.save_file`).
//
// Layout of a file:
//   bytes [0, 8)      N, the header length, unsigned 64-bit little-endian
//   bytes [8, 8 + N)  UTF-8 JSON object:
//                       {"__metadata__": {"key": "value", ...},            (optional)
//                        "<name>": {"dtype": "F32", "shape": [2, 3],
//                                   "data_offsets": [begin, end]}, ...}
//   bytes [8 + N, ..) the data buffer: each tensor row-major, little-endian, at
//                     [begin, end) relative to the buffer start.
// dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL (one byte 0/1).
//
// The writer pads the header with spaces to a multiple of 8 bytes (as the reference
// implementation does, so the data is aligned) and lays the tensors out in the given order.
// The reader checks everything and keeps the header's key order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "ember/store/tensors.hpp"

namespace ember::store {

/// The safetensors dtype string of `d` ("F32", "BF16", "BOOL", ...).
std::string_view safetensors_dtype(DType d);

/// The whole file image of `tensors` (header + data).
/// Throws ValueError for an empty or duplicated name, a name "__metadata__", or a name or
/// metadata string that is not valid UTF-8; ShapeError if a tensor's byte count is not
/// numel * dtype size.
std::vector<std::uint8_t> serialize_safetensors(const NamedTensors& tensors);

/// Writes `tensors` to `path` atomically: the data goes to a temporary file in the same
/// directory, which is flushed to disk (fsync) and renamed over `path`; on any error the
/// temporary file is removed and an existing `path` is left as it was.
/// Throws what serialize_safetensors throws (before touching the disk), and IoError naming
/// the file when creating, writing, syncing or renaming fails.
void write_safetensors(const std::filesystem::path& path, const NamedTensors& tensors);

/// Reads a safetensors file. Every problem throws IoError "[read_safetensors] '<file>':
/// <problem>" ("[read_safetensors] '<file>' is a directory" for a folder), the problem
/// starting with one of:
///   "cannot open"     the file cannot be opened or read;
///   "truncated"       shorter than 8 bytes, than the header length says, or than the last
///                     tensor's end offset;
///   "corrupt header"  invalid JSON / UTF-8, not an object, a duplicated key, a bad entry
///                     (missing or mistyped dtype/shape/data_offsets, negative or
///                     non-integer values), a non-string metadata value, an unknown dtype
///                     string, a byte range that does not match numel * dtype size;
///   "corrupt layout"  byte ranges that overlap, leave gaps, or leave trailing bytes.
/// A dtype that safetensors defines but Ember lacks (U16, U32, U64, F8_*, ...) throws
/// UnsupportedError naming the dtype.
NamedTensors read_safetensors(const std::filesystem::path& path);

/// The same, from a file image in memory; `name` stands for the file in messages.
NamedTensors read_safetensors(std::span<const std::uint8_t> bytes,
                              std::string_view name = "<memory>");

}  // namespace ember::store
