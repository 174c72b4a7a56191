// Atomic file writing for every file Ember writes (weights, configs, checkpoints, logs).
#pragma once

#include <filesystem>
#include <string_view>

namespace ember::store {

/// Writes `bytes` to `path` atomically: a temporary sibling file is written, synced (fsync)
/// and renamed over `path`, then the folder is synced; on any failure the temporary file is
/// removed and an existing `path` is left as it was. Throws IoError "[<op>] ..." naming the
/// file (cannot create, disk full, rename failed, ...).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes,
                       std::string_view op = "write");

}  // namespace ember::store
