// main() of the kernel tests: GoogleTest, plus a table of passed / skipped / failed tests per
// target printed after GoogleTest's summary (what scripts/test.sh and scripts/gpu-test.sh show).
// Target tests are named Targets/<Suite>.<Test>/<target>; the others count as "host".
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

class TargetCounts : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& t) override {
    const std::string name = t.name();
    const std::size_t slash = name.rfind('/');
    const std::string target =
        t.value_param() && slash != std::string::npos ? name.substr(slash + 1) : "host";
    Count& c = counts_[target];
    if (t.result()->Failed()) {
      ++c.failed;
      failed_.push_back(std::string(t.test_suite_name()) + "." + name);
    } else if (t.result()->Skipped()) {
      ++c.skipped;
    } else {
      ++c.passed;
    }
  }

  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    if (counts_.empty()) return;
    std::printf("%-10s %7s %8s %7s\n", "target", "passed", "skipped", "failed");
    for (const auto& [target, c] : counts_)
      std::printf("%-10s %7d %8d %7d\n", target.c_str(), c.passed, c.skipped, c.failed);
    for (const std::string& f : failed_) std::printf("FAILED %s\n", f.c_str());
    std::fflush(stdout);
  }

 private:
  struct Count {
    int passed = 0, skipped = 0, failed = 0;
  };
  std::map<std::string, Count> counts_;
  std::vector<std::string> failed_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new TargetCounts);
  return RUN_ALL_TESTS();
}
