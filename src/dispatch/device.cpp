// ember::Device: parsing, the default device, availability.
#include "ember/dispatch/device.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>

#include "stacks.hpp"

namespace ember {

namespace {

constexpr DeviceKind kKinds[] = {DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Vulkan};

/// f.template operator()<NativeDevice<kind>>() when a stack runs `kind`, else `none`.
template <class R, std::size_t I = 0, class F>
R with_native(DeviceKind kind, R none, F f) {
  if constexpr (I == dispatch::kNumStacks) {
    return none;
  } else {
    using S = dispatch::StackAt<I>;
    if (S::kind == kind) return f.template operator()<dispatch::NativeDevice<S::kind>>();
    return with_native<R, I + 1>(kind, none, f);
  }
}

/// Whether this build has a stack for `kind`.
bool has_kind(DeviceKind kind) {
  return with_native(kind, false, []<class N>() { return true; });
}

/// Number of devices of `kind` (0 when no stack runs it, or when the machine has none:
/// then `why` gets the driver's reason).
int device_count(DeviceKind kind, std::string* why = nullptr) {
  return with_native(kind, 0, [why]<class N>() { return N::count(why); });
}

/// Why `kind` has no device: "not in this build" or "no device on this machine: <reason>".
std::string no_device_reason(DeviceKind kind) {
  if (!has_kind(kind)) return " is not available in this build";
  std::string why;
  device_count(kind, &why);
  return " has no device on this machine" + (why.empty() ? std::string() : " (" + why + ")");
}

/// Whether device `index` of `kind` is a software implementation (Mesa's llvmpipe is a
/// Vulkan device that runs on the CPU): never the default device.
bool is_software(DeviceKind kind, int index) {
  return with_native(kind, false, [index]<class N>() {
    if constexpr (requires { N::software(index); })
      return N::software(index);
    else
      return false;
  });
}

std::string available_list() {
  std::string out;
  for (const Device& d : Device::available()) {
    if (!out.empty()) out += ", ";
    out += d.to_string();
  }
  return out;
}

std::string lower_trimmed(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string s(text.substr(b, e - b));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* device_kind_name(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Cpu:
      return "cpu";
    case DeviceKind::Cuda:
      return "cuda";
    case DeviceKind::Vulkan:
      return "vulkan";
  }
  return "unknown";
}

Device::Device() : Device(default_()) {}

Device Device::cpu() {
  return Device(Raw{}, DeviceKind::Cpu, 0, false, false);
}

Device Device::of(DeviceKind kind, int index) {
  return Device(Raw{}, kind, index, false, false);
}

Device Device::autodiff() const {
  return Device(Raw{}, kind_, index_, true, checkpointing_);
}

Device Device::gradient_checkpointing() const {
  return Device(Raw{}, kind_, index_, true, true);
}

Device Device::without_autodiff() const {
  return Device(Raw{}, kind_, index_, false, false);
}

std::string Device::to_string() const {
  std::string s = device_kind_name(kind_);
  if (kind_ != DeviceKind::Cpu) {
    s += ':';
    s += std::to_string(index_);
  }
  if (autodiff_) s += "+autodiff";
  if (checkpointing_) s += "+checkpointing";
  return s;
}

bool Device::is_available() const {
  return dispatch::find_stack(*this) >= 0 && index_ >= 0 && index_ < device_count(kind_);
}

std::vector<Device> Device::available() {
  std::vector<Device> out;
  for (const dispatch::Grad g :
       {dispatch::Grad::None, dispatch::Grad::Autodiff, dispatch::Grad::Checkpointing}) {
    for (const DeviceKind k : kKinds) {
      for (int i = 0; i < device_count(k); ++i) {
        Device d = Device::of(k, i);
        if (g == dispatch::Grad::Autodiff) d = d.autodiff();
        if (g == dispatch::Grad::Checkpointing) d = d.gradient_checkpointing();
        if (d.is_available()) out.push_back(d);
      }
    }
  }
  return out;
}

Device Device::parse(std::string_view text) {
  const std::string s = lower_trimmed(text);
  const auto bad = [&](const std::string& why) -> Device {
    detail::fail<DeviceError>("device", "cannot parse device '", std::string(text), "': ", why,
                              " (syntax: <kind>[:<index>][+autodiff][+checkpointing], e.g. cpu, "
                              "cpu+autodiff, cuda:0; available: ",
                              available_list(), ")");
  };
  std::string_view rest(s);
  // The options start at the first '+' that is not a sign right after the index's colon
  // ("vulkan:+1" is a bad index, not an option).
  std::size_t plus = rest.find('+');
  while (plus != std::string_view::npos && plus > 0 && rest[plus - 1] == ':')
    plus = rest.find('+', plus + 1);
  std::string_view head = rest.substr(0, plus);
  std::string_view flags = plus == std::string_view::npos ? std::string_view{} : rest.substr(plus);

  // kind[:index]
  const std::size_t colon = head.find(':');
  const std::string_view kind_name = head.substr(0, colon);
  DeviceKind kind{};
  bool known = false;
  for (const DeviceKind k : kKinds) {
    if (kind_name == device_kind_name(k)) {
      kind = k;
      known = true;
    }
  }
  if (kind_name.empty()) return bad("no device kind");
  if (!known) return bad("unknown device kind '" + std::string(kind_name) + "'");
  int index = 0;
  if (colon != std::string_view::npos) {
    const std::string_view idx = head.substr(colon + 1);
    const auto [ptr, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), index);
    if (idx.empty() || ec != std::errc{} || ptr != idx.data() + idx.size() || index < 0) {
      return bad("invalid index '" + std::string(idx) + "'");
    }
    // PyTorch refuses "cuda:01" as well: one device, one spelling.
    if (idx.size() > 1 && idx[0] == '0')
      return bad("index '" + std::string(idx) + "' has a leading zero");
  }

  // +autodiff / +checkpointing, in any order, each at most once
  bool autodiff = false, checkpointing = false;
  while (!flags.empty()) {
    flags.remove_prefix(1);  // '+'
    const std::size_t next = flags.find('+');
    const std::string_view flag = flags.substr(0, next);
    if (flag == "autodiff" && !autodiff) {
      autodiff = true;
    } else if (flag == "checkpointing" && !checkpointing) {
      checkpointing = true;
    } else if (flag == "autodiff" || flag == "checkpointing") {
      return bad("'+" + std::string(flag) + "' appears twice");
    } else {
      return bad("unknown option '+" + std::string(flag) +
                 "' (options: +autodiff, +checkpointing)");
    }
    flags = next == std::string_view::npos ? std::string_view{} : flags.substr(next);
  }

  Device d(Raw{}, kind, index, autodiff || checkpointing, checkpointing);
  const int count = device_count(kind);
  if (count == 0) {
    detail::fail<DeviceError>("device", device_kind_name(kind), no_device_reason(kind),
                              " (available: ", available_list(), ")");
  }
  if (index >= count) {
    // The kind and index as written: cpu's to_string() leaves the index out.
    detail::fail<DeviceError>("device", device_kind_name(kind), ":", index,
                              " does not exist: ", device_kind_name(kind), " has ", count,
                              count == 1 ? " device" : " devices", " (index 0",
                              count > 1 ? " to " + std::to_string(count - 1) : std::string(),
                              "; available: ", available_list(), ")");
  }
  if (!d.is_available()) {
    detail::fail<DeviceError>("device", d.to_string(),
                              " is not available in this build: no autodiff stack is registered"
                              " for ",
                              device_kind_name(kind), " (available: ", available_list(), ")");
  }
  return d;
}

Device Device::default_() {
  const char* env = std::getenv("EMBER_DEVICE");
  if (env == nullptr || *env == '\0') {
    // The best available device, found once: the first hardware device of the first kind
    // that has one, in the order cuda, vulkan, cpu (a software Vulkan device such as
    // llvmpipe is slower than the CPU backend, so it is never chosen).
    static const Device best = [] {
      for (const DeviceKind k : {DeviceKind::Cuda, DeviceKind::Vulkan}) {
        for (int i = 0; i < device_count(k); ++i)
          if (!is_software(k, i)) return Device::of(k, i);
      }
      return Device::cpu();
    }();
    return best;
  }
  // Parsing is cheap, but creation functions take Device{} by default: cache per thread.
  thread_local std::string cached_text;
  thread_local Device cached = Device::cpu();
  if (cached_text != env) {
    try {
      cached = parse(env);
    } catch (const DeviceError& e) {
      std::string_view why = e.what();
      if (why.starts_with("[device] ")) why.remove_prefix(9);
      detail::fail<DeviceError>("device", "invalid EMBER_DEVICE='", env, "': ", why);
    }
    cached_text = env;
  }
  return cached;
}

namespace dispatch {

int find_stack(const Device& device) {
  int found = -1;
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    ((found < 0 && StackAt<Is>::kind == device.kind() && StackAt<Is>::grad == grad_of(device)
          ? (found = static_cast<int>(Is), 0)
          : 0),
     ...);
  }
  (std::make_index_sequence<kNumStacks>{});
  return found;
}

std::uint8_t stack_of(const char* op, const Device& device) {
  const int s = find_stack(device);
  if (s < 0 || device.index() < 0 || device.index() >= device_count(device.kind())) {
    const int count = device_count(device.kind());
    const std::string why =
        s < 0 || count == 0
            ? std::string(device_kind_name(device.kind())) + no_device_reason(device.kind())
            : std::string(device_kind_name(device.kind())) + " has " + std::to_string(count) +
                  (count == 1 ? " device" : " devices");
    detail::fail<DeviceError>(op, "device ", device.to_string(), " is not available: ", why,
                              " (available: ", available_list(), ")");
  }
  return static_cast<std::uint8_t>(s);
}

void throw_device_mismatch(const char* op, const Device& a, const Device& b) {
  detail::fail<DeviceError>(op, "tensors are on different devices: ", a.to_string(), " and ",
                            b.to_string());
}

}  // namespace dispatch
// ---- runtime services ------------------------------------------------------------------------

namespace {
/// Runs f.template operator()<B>(native device) on the backend of `device`'s stack.
template <class R, class Fn>
R on_stack(const char* op, const Device& device, Fn f) {
  return dispatch::create<R>(op, device, f);
}
}  // namespace

MemoryStats memory_stats(const Device& device) {
  return on_stack<MemoryStats>("memory_stats", device, []<class B>(const typename B::Device& d) {
    if constexpr (requires { B::memory_stats(d); })
      return B::memory_stats(d);
    else
      return MemoryStats{};
  });
}

void reset_peak_memory(const Device& device) {
  on_stack<int>("reset_peak_memory", device, []<class B>(const typename B::Device& d) {
    if constexpr (requires { B::reset_peak_memory(d); }) B::reset_peak_memory(d);
    return 0;
  });
}

void set_num_threads(const Device& device, int n) {
  if (n < 1) detail::fail<ValueError>("set_num_threads", "thread count ", n, " must be >= 1");
  on_stack<int>("set_num_threads", device, [&]<class B>(const typename B::Device&) {
    if constexpr (requires { B::set_num_threads(n); })
      B::set_num_threads(n);
    else
      detail::fail<UnsupportedError>("set_num_threads", "device ", device.to_string(),
                                     " has no host threads to set");
    return 0;
  });
}

int num_threads(const Device& device) {
  return on_stack<int>("num_threads", device, []<class B>(const typename B::Device&) {
    if constexpr (requires { B::num_threads(); })
      return B::num_threads();
    else
      return 1;
  });
}

}  // namespace ember
