// Autotune (Burn's autotune): pick the fastest of several candidate kernels for an
// operation on this device, once, and remember it.
//
// A key names the operation, the shape (each dim rounded up to a power of two, so nearby
// shapes share a result), the element type and the device. On the first use of a key every
// candidate runs once (warm-up, compilation) and is then timed with the device's timers
// (median of 5); the winner's name is kept in memory and written to
// $EMBER_CACHE_DIR/autotune.json (else $XDG_CACHE_HOME/ember/, else ~/.cache/ember/).
// EMBER_AUTOTUNE=0 turns tuning off: the first candidate (the default) is used.
// EMBER_AUTOTUNE_LOG=1 prints one line per key to stderr when it is tuned (each candidate's
// median ms, failures with their error, the winner) or first reused from the file.
// A remembered winner is reused only while every candidate offered now took part in that
// tuning (timed or failed): a candidate added since (a vendor library installed) tunes again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ember/kernel/device.hpp"

namespace ember::tune {

/// What a tuned choice is for.
struct Key {
  std::string op;                    // e.g. "unary_tanh"
  std::vector<std::uint64_t> shape;  // bucketed
  std::string dtype;                 // e.g. "f32"
  std::string device;                // kind, name and driver of the device
  /// "op|1024x64|f32|cuda NVIDIA H200 13.0"
  std::string str() const;
};

/// n rounded up to a power of two (0 stays 0).
std::uint64_t bucket(std::uint64_t n);
/// The key of `op` on `shape` (bucketed) of `dtype` on `device`.
Key make_key(const std::string& op, const std::vector<std::uint64_t>& shape,
             const std::string& dtype, const kernel::ComputeDevice& device);

/// A candidate: `run` enqueues the work on the device (it is timed with the device timer).
struct Candidate {
  std::string name;
  std::function<void()> run;
};

class Tuner {
 public:
  /// The process-wide tuner, persisted to the default file.
  static Tuner& global();
  /// A tuner persisted to `file` (empty: kept in memory only).
  explicit Tuner(std::filesystem::path file);

  /// The index of the fastest candidate for `key`. Candidates that throw are skipped; when
  /// all throw, the first one's error is rethrown. ValueError for an empty list.
  std::size_t choose(const Key& key, const std::vector<Candidate>& candidates,
                     kernel::ComputeDevice& device);
  /// The remembered winner of a key, if any.
  std::optional<std::string> winner(const Key& key) const;
  /// The measured times (ms) of the last tuning of a key, by candidate name.
  std::map<std::string, double> timings(const Key& key) const;
  /// False when EMBER_AUTOTUNE=0.
  static bool enabled();
  /// True when EMBER_AUTOTUNE_LOG is set (and not 0).
  static bool log_enabled();
  /// True when EMBER_VENDOR_CANDIDATES=1: vendor libraries' candidates (cuBLASLt, cuDNN) take
  /// part in tuning. Off by default until they have run on hardware (docs/gpu.md); a
  /// candidate forced by name (EMBER_MATMUL_CANDIDATE, EMBER_CONV_CANDIDATE) runs regardless.
  static bool vendor_enabled();
  /// $EMBER_CACHE_DIR/autotune.json (or the XDG / home fallbacks); empty when none applies.
  static std::filesystem::path default_path();

 private:
  void load();
  void save() const;

  std::filesystem::path file_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> winners_;
  std::map<std::string, std::map<std::string, double>> times_;
  std::map<std::string, std::map<std::string, std::string>> failed_;  // candidate -> error
  std::set<std::string> logged_;  // keys printed by EMBER_AUTOTUNE_LOG in this process
};

}  // namespace ember::tune
