// Interop between Dispatch tensors on a cpu device and the Cpu backend's primitive
// (CpuTensor), for code that needs the CPU storage itself (tests that build strided views,
// zero-copy hand-off to other libraries).
#pragma once

#include "ember/cpu/tensor.hpp"
#include "ember/dispatch/dispatch.hpp"

namespace ember::dispatch {

/// The CpuTensor holding the values of `t` (shares its data; an autodiff tensor gives its
/// values without the graph). Throws DeviceError when `t` is not on a cpu device.
CpuTensor cpu_primitive(const DispatchTensor<Float>& t);
CpuTensor cpu_primitive(const DispatchTensor<Int>& t);
CpuTensor cpu_primitive(const DispatchTensor<Bool>& t);

/// A Dispatch tensor of kind K on `device` holding `t` (shares its data; on an autodiff
/// device it is a constant that does not require gradients). Throws DeviceError when
/// `device` is not a cpu device available in this build. K is Float, Int or Bool.
template <class K>
DispatchTensor<K> from_cpu_primitive(CpuTensor t, const Device& device = Device::cpu());

}  // namespace ember::dispatch
