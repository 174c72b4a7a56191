// The `ember onnx` subcommand (onnx.cpp): inspect, run and convert ONNX models.
#pragma once

#include <string>
#include <vector>

#include "commands.hpp"

namespace ember::cli {

struct OnnxArgs {
  std::string action;  ///< "inspect", "run" or "convert" (set by the parser)
  std::string model;
  std::vector<std::string> inputs;  ///< NAME=FILE.npy
  std::string device;
  std::string out_dir = ".";
  std::string name;
  std::string name_space = "model";
  int threads = 0;
  int repeat = 1;
};

CLI::App* add_onnx_command(CLI::App& app, OnnxArgs& args);
int run_onnx(const OnnxArgs& args);

}  // namespace ember::cli
