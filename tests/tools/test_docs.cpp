// What the documentation tells users to type, run as written (issue 19): the link lines of
// the README (between "<!-- link-lines" and "<!-- end link-lines -->") each build and run a
// program, the compile error of a loss module given tensors of another backend says how to
// fix it, and scripts/train-fashion-mnist.sh puts the run where its --model says.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "cli_test_util.hpp"

namespace ember::cli::testing {
namespace {

/// Runs `command` through the shell with stdout and stderr to `log`; the exit status.
int shell(const std::string& command, const fs::path& log) {
  const std::string full = "(" + command + ") >'" + log.string() + "' 2>&1";
  const int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// The command lines of the README's link-lines block.
std::vector<std::string> readme_link_lines() {
  const std::string readme = slurp(fs::path(EMBER_SOURCE_DIR) / "README.md");
  const auto begin = readme.find("<!-- link-lines");
  const auto end = readme.find("<!-- end link-lines -->");
  if (begin == std::string::npos || end == std::string::npos) return {};
  std::vector<std::string> out;
  for (const auto& l : lines(readme.substr(begin, end - begin))) {
    if (l.rfind("c++ ", 0) == 0) out.push_back(l);
  }
  return out;
}

/// An install-like prefix: DIR/include (the sources' headers) and DIR/lib (the built
/// libraries).
void make_prefix(const fs::path& dir) {
  fs::create_directories(dir);
  fs::create_directory_symlink(fs::path(EMBER_SOURCE_DIR) / "include", dir / "include");
  fs::create_directory_symlink(fs::path(EMBER_LIB_DIR), dir / "lib");
}

// Uses a symbol of every library of the first line (taken only when argc > 5, so the
// program runs without files): the dashboard (ncurses), IDX, CSV and image files (zlib,
// libcsv, libstb), PyTorch files (libzip), a Linear layer on Dispatch, Adam.
const char* kFullProgram = R"(#include <iostream>
#include "ember/data/csv.hpp"
#include "ember/data/image_folder.hpp"
#include "ember/data/mnist.hpp"
#include "ember/nn.hpp"
#include "ember/optim/optim.hpp"
#include "ember/train/train.hpp"
int main(int argc, char** argv) {
  using namespace ember;
  if (argc > 5) {
    auto tui = train::make_tui_renderer();
    auto idx = data::read_idx(argv[1]);
    data::CsvDataset csv(argv[2]);
    auto weights = store::read_weights(argv[3]);
    auto image = data::read_image(argv[4], 1);
  }
  auto fc = nn::LinearConfig{.d_input = 2, .d_output = 1}.init();
  auto adam = optim::AdamConfig{}.init();
  (void)adam;
  std::cout << "ok " << fc.forward(DTensor<2>::ones({3, 2})).dims()[0] << "\n";
}
)";

const char* kTensorProgram = R"(#include <iostream>
#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"
int main() {
  using namespace ember;
  auto x = Tensor<Cpu, 2>::ones({2, 3});
  std::cout << "ok " << x.matmul(x.transpose()).sum().into_scalar() << "\n";
}
)";

TEST(Docs, EveryReadmeLinkLineBuildsAndRuns) {
  const auto commands = readme_link_lines();
  ASSERT_EQ(commands.size(), 2u) << "the README's link-lines block changed: update this test";
  const std::vector<std::pair<const char*, std::string>> programs = {{kFullProgram, "ok 3"},
                                                                     {kTensorProgram, "ok 12"}};
  TempDir tmp("docs");
  const fs::path prefix = tmp.path() / "prefix";
  make_prefix(prefix);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const fs::path work = tmp.path() / ("line" + std::to_string(i));
    fs::create_directories(work);
    std::ofstream(work / "main.cpp") << programs[i].first;
    // Exactly the documented line, DIR being the prefix.
    const std::string cmd = std::regex_replace(commands[i], std::regex("DIR"), prefix.string());
    ASSERT_EQ(shell("cd '" + work.string() + "' && " + cmd, work / "build.log"), 0)
        << cmd << "\n"
        << slurp(work / "build.log");
    ASSERT_EQ(shell("cd '" + work.string() + "' && ./main", work / "run.log"), 0)
        << slurp(work / "run.log");
    EXPECT_NE(slurp(work / "run.log").find(programs[i].second), std::string::npos)
        << slurp(work / "run.log");
  }
}

TEST(Docs, ALossModuleOfAnotherBackendSaysHowToMakeItForThatBackend) {
  TempDir tmp("loss-backend");
  std::ofstream(tmp.path() / "main.cpp") << R"(#include "ember/cpu/cpu.hpp"
#include "ember/nn.hpp"
int main() {
  using namespace ember;
  auto x = Tensor<Cpu, 2>::ones({2, 3});
  auto loss = nn::MseLossConfig{}.init();  // Dispatch
  return static_cast<int>(loss.forward(x, x).into_scalar());
}
)";
  const std::string cmd = std::string(EMBER_CXX) + " -std=c++20 -fsyntax-only -I '" +
                          EMBER_SOURCE_DIR + "/include' main.cpp";
  EXPECT_NE(shell("cd '" + tmp.path().string() + "' && " + cmd, tmp.path() / "log"), 0);
  const std::string log = slurp(tmp.path() / "log");
  EXPECT_NE(log.find("[MseLoss] the tensors are of another backend than this loss module"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("MseLossConfig{}.init<Cpu>()"), std::string::npos) << log;
}

TEST(Docs, TheTrainingScriptPutsTheRunWhereItsModelSays) {
  TempDir tmp("script");
  // A stand-in `ember` that records its arguments.
  const fs::path stub = tmp.path() / "ember";
  const fs::path calls = tmp.path() / "calls";
  std::ofstream(stub) << "#!/bin/sh\necho \"$*\" >> '" << calls.string() << "'\n";
  fs::permissions(stub, fs::perms::owner_all);
  const std::string script = std::string(EMBER_SOURCE_DIR) + "/scripts/train-fashion-mnist.sh";
  const auto run = [&](const std::string& args) {
    fs::remove(calls);
    EXPECT_EQ(shell("EMBER_BIN='" + stub.string() + "' bash '" + script + "' " + args,
                    tmp.path() / "log"),
              0)
        << slurp(tmp.path() / "log");
    return lines(slurp(calls));
  };
  EXPECT_EQ(run("--model mlp --epochs 2"),
            (std::vector<std::string>{
                "train --run-dir runs/fashion-mnist-mlp --resume --model mlp --epochs 2",
                "eval runs/fashion-mnist-mlp"}));
  EXPECT_EQ(run("--model=cnn"),
            (std::vector<std::string>{"train --run-dir runs/fashion-mnist-cnn --resume --model=cnn",
                                      "eval runs/fashion-mnist-cnn"}));
  EXPECT_EQ(
      run("--run-dir /tmp/x --model mlp"),
      (std::vector<std::string>{"train --resume --run-dir /tmp/x --model mlp", "eval /tmp/x"}));
}

}  // namespace
}  // namespace ember::cli::testing
