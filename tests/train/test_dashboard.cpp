// The dashboard driven through tmux: a detached session of fixed size runs
// ember_train_dashboard_demo; capture-pane shows what a user would see, send-keys types.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "train_test_util.hpp"

namespace ember::train {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

/// Runs a shell command, returns its stdout.
std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

/// One tmux server of our own (its own socket, no user config), killed at the end.
class Tmux {
 public:
  Tmux() : socket_("ember-train-test-" + std::to_string(::getpid())) {}
  ~Tmux() { shell(cmd("kill-server") + " 2>/dev/null"); }
  std::string cmd(const std::string& args) const {
    return "tmux -L " + socket_ + " -f /dev/null " + args;
  }
  std::string capture() const { return shell(cmd("capture-pane -p -t ember")); }
  void keys(const std::string& k) const { shell(cmd("send-keys -t ember " + k)); }

  /// Polls capture() until `pred` holds (true) or `seconds` pass (false).
  bool wait_for(const std::function<bool(const std::string&)>& pred, double seconds,
                std::string* screen) const {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    do {
      *screen = capture();
      if (pred(*screen)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (std::chrono::steady_clock::now() < end);
    *screen = capture();
    return pred(*screen);
  }

 private:
  std::string socket_;
};

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Braille dots (U+2800..U+28FF: UTF-8 E2 A0..A3 xx) or the ASCII plot's points.
bool has_plot_points(const std::string& s) {
  for (std::size_t i = 0; i + 2 < s.size(); ++i) {
    const auto a = static_cast<unsigned char>(s[i]), b = static_cast<unsigned char>(s[i + 1]);
    if (a == 0xE2 && b >= 0xA0 && b <= 0xA3 && !(b == 0xA0 && s[i + 2] == '\x80')) return true;
  }
  return false;
}

TEST(TrainDashboard, DrivenThroughTmux) {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  }
  TempDir dir("tui");
  const fs::path run = dir.path() / "run", rc = dir.path() / "rc";
  {
    std::ofstream script(dir.path() / "run.sh");
    script << "export LANG=C.UTF-8 LC_ALL=C.UTF-8\n"
           << "unset EMBER_NO_TUI\n"
           << "'" << EMBER_TRAIN_DASHBOARD_DEMO << "' '" << run.string() << "' 40 200\n"
           << "echo $? > '" << rc.string() << ".tmp' && mv '" << rc.string() << ".tmp' '"
           << rc.string() << "'\n";
  }
  Tmux tmux;
  ASSERT_EQ(std::system((tmux.cmd("new-session -d -s ember -x 120 -y 36 'sh " +
                                  (dir.path() / "run.sh").string() + "'"))
                            .c_str()),
            0);
  std::string screen;
  // Metric names, the plot, the progress bar with ETA and items/s.
  ASSERT_TRUE(tmux.wait_for(
      [](const std::string& s) {
        return has(s, "Loss  full history") && has(s, "ETA") && has(s, "items/s") &&
               has_plot_points(s);
      },
      30, &screen))
      << screen;
  for (const char* name : {"Metric", "Train", "Valid", "Loss", "Accuracy", "Learning Rate",
                           "Throughput", "CPU Memory", "Epoch ", "batch "}) {
    EXPECT_TRUE(has(screen, name)) << name << "\n" << screen;
  }
  EXPECT_TRUE(has(screen, "%  ")) << screen;  // the progress percentage
  // Right arrow: the next metric is plotted.
  tmux.keys("Right");
  EXPECT_TRUE(tmux.wait_for(
      [](const std::string& s) { return has(s, "Accuracy (%)  full history"); }, 10, &screen))
      << screen;
  // r: recent history.
  tmux.keys("r");
  EXPECT_TRUE(tmux.wait_for(
      [](const std::string& s) { return has(s, "Accuracy (%)  recent (last epoch)"); }, 10,
      &screen))
      << screen;
  // q: the stop prompt; y: stop.
  tmux.keys("q");
  ASSERT_TRUE(tmux.wait_for([](const std::string& s) { return has(s, "Stop training? (y/n)"); }, 10,
                            &screen))
      << screen;
  tmux.keys("y");
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(rc) && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(rc)) << "the demo did not exit after y\n" << tmux.capture();
  EXPECT_EQ(slurp(rc), "0\n");
  // A checkpoint of the point reached, then the logs of the epochs done.
  const auto latest = CheckpointStore(run / "checkpoints").latest();
  ASSERT_TRUE(latest);
  EXPECT_TRUE(fs::exists(CheckpointStore(run / "checkpoints").path(*latest) / "model.safetensors"));
  EXPECT_TRUE(fs::exists(run / "summary.json"));
}

}  // namespace
}  // namespace ember::train
