// Test helper for the dashboard test (test_dashboard.cpp runs it inside tmux): trains the tiny
// classifier slowly with the dashboard on, so that keys can be sent while it runs.
//
//   ember_train_dashboard_demo RUN_DIR [DELAY_MS] [EPOCHS]
//
// Exit status: 0 when training completed or was stopped from the dashboard, 1 on an error.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "train_test_util.hpp"

using namespace ember;
using namespace ember::train;
using namespace ember::train::testing;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " RUN_DIR [DELAY_MS] [EPOCHS]\n";
    return 1;
  }
  const int delay_ms = argc > 2 ? std::atoi(argv[2]) : 40;
  const std::size_t epochs = argc > 3 ? static_cast<std::size_t>(std::atoi(argv[3])) : 200;
  try {
    const Device dev = Device::cpu().autodiff();
    VecLoader train{make_data(96, 1), 8, 3, dev};
    VecLoader valid{make_data(24, 2), 8, std::nullopt, Device::cpu()};
    auto learner = LearnerBuilder(make_net(dev, 1, 0.1), optim::AdamConfig{}.init(), train, valid)
                       .train_step([delay_ms](TinyNet<>& m, const XYBatch& b) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
                         return classify(m, b);
                       })
                       .valid_step(classify)
                       .learning_rate(1e-2)
                       .metric(LossMetric{})
                       .metric(AccuracyMetric{})
                       .metric(LearningRateMetric{})
                       .metric(ThroughputMetric{})
                       .metric(CpuMemoryMetric{})
                       .num_epochs(epochs)
                       .seed(7)
                       .run_dir(argv[1])
                       .overwrite()
                       .renderer(RendererKind::Tui)
                       .build();
    learner.fit();
    std::cout << "stop reason: " << stop_reason_name(learner.stop_reason()) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
