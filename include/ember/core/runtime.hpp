// Runtime services of a device, reached through the backend (ember/backend/core.hpp) and, for
// applications, through ember::Device (ember/dispatch/device.hpp): memory statistics and the
// host threads of the CPU kernels.
#pragma once

#include <cstddef>

namespace ember {

/// Memory held by the tensors of one device, in bytes.
struct MemoryStats {
  /// Requested bytes of the live tensors.
  std::size_t live_bytes = 0;
  /// The most live bytes at once since the start or the last reset_peak_memory.
  std::size_t peak_bytes = 0;
  /// Bytes the device's allocator keeps cached, free for reuse.
  std::size_t cached_bytes = 0;
};

}  // namespace ember
