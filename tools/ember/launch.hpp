// `ember launch` (tools/ember/launch.cpp): the process launcher of data-parallel jobs.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "run.hpp"

namespace ember::cli {

/// Where and how many processes to start.
struct LaunchSettings {
  int nproc = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master{};  // ADDR:PORT; empty: 127.0.0.1 and a free port (one node only)
  double grace_seconds = 10;
};

/// Options of `ember launch`.
struct LaunchArgs {
  LaunchSettings settings;
  std::vector<std::string> command;
};

/// "ADDR:PORT" ("[v6]:PORT" too) -> {ADDR, PORT}; CliError when malformed.
std::pair<std::string, int> parse_master(const std::string& text);

/// Starts settings.nproc processes running `command` with the torchrun variables set (see
/// launch.cpp), forwards SIGTERM/SIGHUP (and a SIGINT sent with kill) to them, and waits.
/// When one exits with an error or a signal, the others get SIGTERM, then SIGKILL after the
/// grace period, and CliError names the first failed rank. Returns 0 when all succeeded.
int launch_processes(const LaunchSettings& settings, const std::vector<std::string>& command);

CLI::App* add_launch_command(CLI::App& app, LaunchArgs& args);
int run_launch(const LaunchArgs& args);

}  // namespace ember::cli
