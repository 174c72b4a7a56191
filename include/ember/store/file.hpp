// Atomic file writing for every file Ember writes (weights, configs, checkpoints, logs), and
// opening files for reading with the messages every reader shares.
#pragma once

#include <filesystem>
#include <fstream>
#include <string_view>

namespace ember::store {

/// Writes `bytes` to `path` atomically: a temporary sibling file is written, synced (fsync)
/// and renamed over `path`, then the folder is synced; on any failure the temporary file is
/// removed and an existing `path` is left as it was. Throws IoError "[<op>] ..." naming the
/// file (cannot create, disk full, rename failed, ...).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes,
                       std::string_view op = "write");

/// `path` opened for binary reading. Throws IoError "[<op>] '<path>' is a directory" or
/// "[<op>] '<path>': cannot open: <reason>" (strerror: missing file, no permission, ...).
std::ifstream open_for_reading(const std::filesystem::path& path, std::string_view op);

}  // namespace ember::store
