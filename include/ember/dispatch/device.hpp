// ember::Device: the run-time device of the Dispatch backend (Burn's burn-dispatch device).
//
// A Device names a kind of hardware (cpu today; cuda and vulkan once their backends exist),
// an index on that hardware, and whether tensors created on it record gradients (autodiff,
// optionally with gradient checkpointing). Each combination maps to one statically compiled
// backend stack (Cpu, Autodiff<Cpu>, ...) registered in src/dispatch/stacks.hpp.
//
// String syntax (Device::parse, EMBER_DEVICE, to_string):
//   <kind>[:<index>][+autodiff][+checkpointing]
//   "cpu", "cpu:0", "cpu+autodiff", "cpu+autodiff+checkpointing", "cpu+checkpointing"
//   (checkpointing implies autodiff), later "cuda:1", "vulkan:0+autodiff".
// to_string() writes the canonical form: the index only when the kind has several devices
// ("cpu", "cuda:0"), then "+autodiff", then "+checkpointing".
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ember/core/runtime.hpp"

namespace ember {

/// The hardware a Device runs on.
enum class DeviceKind : std::uint8_t { Cpu, Cuda, Vulkan };

/// "cpu", "cuda", "vulkan".
const char* device_kind_name(DeviceKind kind);

/// A run-time device of the Dispatch backend: a value type (8 bytes), cheap to copy and
/// compare. A default-constructed Device is `Device::default_()`.
class Device {
 public:
  /// The default device (see `default_()`). Throws DeviceError when EMBER_DEVICE is set to
  /// an invalid or unavailable device.
  Device();

  /// The host CPU (plain, no autodiff). Always available.
  static Device cpu();
  /// Device `index` of `kind` (plain). Not checked for availability here: creating a tensor
  /// on a device that is not built throws DeviceError.
  static Device of(DeviceKind kind, int index = 0);

  /// Parses "<kind>[:<index>][+autodiff][+checkpointing]" (see the file comment; surrounding
  /// spaces and upper case are accepted). Throws DeviceError "[device] ..." for a malformed
  /// string, an unknown kind, an index out of range, or a kind not available in this build
  /// (e.g. "[device] cuda is not available in this build (available: cpu, ...)").
  static Device parse(std::string_view text);

  /// The default device: `parse(EMBER_DEVICE)` when that environment variable is set and
  /// not empty, else the best available device (cpu today; cuda:0 once built). Read on every
  /// call (cached while the variable's value does not change). Throws DeviceError when
  /// EMBER_DEVICE is invalid.
  static Device default_();

  /// Every device this build can run tensors on, plain first: "cpu", "cpu+autodiff", ...
  static std::vector<Device> available();

  /// True when a backend stack for this device is built (see `available()`).
  bool is_available() const;

  /// This device with autodiff on (tensors record the operations that need gradients).
  Device autodiff() const;
  /// This device with autodiff and gradient checkpointing on (memory-bound ops are recomputed
  /// in backward instead of stored; results are identical).
  Device gradient_checkpointing() const;
  /// This device without autodiff (the device of `inner()` tensors).
  Device without_autodiff() const;

  DeviceKind kind() const { return kind_; }
  int index() const { return index_; }
  /// True when tensors on this device record gradients (also true with checkpointing).
  bool is_autodiff() const { return autodiff_; }
  bool is_checkpointing() const { return checkpointing_; }

  /// Canonical name: "cpu", "cpu+autodiff", "cpu+autodiff+checkpointing", "cuda:1".
  std::string to_string() const;

  bool operator==(const Device&) const = default;

 private:
  struct Raw {};
  constexpr Device(Raw, DeviceKind kind, int index, bool autodiff, bool checkpointing)
      : kind_(kind), autodiff_(autodiff), checkpointing_(checkpointing), index_(index) {}

  DeviceKind kind_ = DeviceKind::Cpu;
  bool autodiff_ = false;
  bool checkpointing_ = false;
  std::int32_t index_ = 0;
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << d.to_string();
}

// ---- runtime services of a device (any backend, no backend named) ----------------------------
/// Memory held by the tensors of `device`'s backend: on the CPU every live CPU tensor (whatever
/// its autodiff mode) and the buffer pool's cache. Throws DeviceError when the device is not
/// available in this build.
MemoryStats memory_stats(const Device& device = Device::default_());
/// Restarts memory_stats(device).peak_bytes at the current live bytes.
void reset_peak_memory(const Device& device = Device::default_());
/// The number of host threads `device`'s kernels use (CPU devices: EMBER_NUM_THREADS or the
/// hardware concurrency by default). set_num_threads throws ValueError for n < 1 and
/// UnsupportedError for a device whose backend has no host threads.
void set_num_threads(const Device& device, int n);
int num_threads(const Device& device = Device::default_());

}  // namespace ember
