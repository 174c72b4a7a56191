// Saved optimizer state (torch's optimizer.state_dict(), keyed by parameter path) and its
// file form.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ember/core/data.hpp"

namespace ember::optim {

/// The state of an optimizer over one model: `tensors` holds "<param path>.<state name>" in
/// the parameter's shape (names as torch's: momentum_buffer, exp_avg, exp_avg_sq,
/// max_exp_avg_sq, square_avg, grad_avg, sum); `meta` is {"optimizer": "<name>", "config":
/// <config JSON>, "params": {"<path>": {"step": n, "state": ["exp_avg", ...]}}}.
struct OptimizerRecord {
  std::map<std::string, TensorData> tensors{};
  nlohmann::json meta{};
};

/// Writes the record as a safetensors file (the tensors, and `meta` as JSON text under the
/// metadata key "ember.optimizer"), atomically. Throws IoError.
void save_record(const OptimizerRecord& record, const std::filesystem::path& path);

/// Reads a file written by save_record. Throws IoError if the file is missing, truncated or
/// corrupt, or has no "ember.optimizer" metadata (not an optimizer record).
OptimizerRecord load_record(const std::filesystem::path& path);

}  // namespace ember::optim
