// Helpers of the Fusion tests: a scope that sets fusion on or off and starts the counters
// from zero, restoring the previous setting at its end.
#pragma once

#include "ember/fusion/fusion.hpp"

namespace ember::test {

class FusionScope {
 public:
  explicit FusionScope(bool on) : was_(fusion::enabled()) {
    fusion::set_enabled(on);
    fusion::reset_stats();
  }
  ~FusionScope() { fusion::set_enabled(was_); }
  FusionScope(const FusionScope&) = delete;
  FusionScope& operator=(const FusionScope&) = delete;

 private:
  bool was_;
};

}  // namespace ember::test
