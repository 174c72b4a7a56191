// load_config names the file and the reason it cannot be read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ember/module/config.hpp"
#include "ember/nn/linear.hpp"
#include "fixtures.hpp"

namespace ember::nn {
namespace {

// ---- load_config ----------------------------------------------------------------------------

TEST(LoadConfig, NamesTheFileAndTheReason) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ember_config_json_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "folder.json");
  const auto path = [&](const char* name) { return (dir / name).string(); };
  EMBER_EXPECT_THROW_MSG(load_config<LinearConfig>(dir / "folder.json"), IoError,
                         "[load_config] '" + path("folder.json") + "' is a directory");
  EMBER_EXPECT_THROW_MSG(
      load_config<LinearConfig>(dir / "missing.json"), IoError,
      "[load_config] '" + path("missing.json") + "': cannot open: No such file or directory");
  { std::ofstream(dir / "bad.json") << "{\"d_input\": 3,"; }
  EMBER_EXPECT_THROW_MSG(load_config<LinearConfig>(dir / "bad.json"), IoError,
                         "[load_config] '" + path("bad.json") + "' is not valid JSON");
  { std::ofstream(dir / "empty.json"); }
  EMBER_EXPECT_THROW_MSG(load_config<LinearConfig>(dir / "empty.json"), IoError,
                         "is not valid JSON");
  save_config(LinearConfig{.d_input = 2, .d_output = 5}, dir / "ok.json");
  EXPECT_EQ(load_config<LinearConfig>(dir / "ok.json").d_output, 5);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ember::nn
