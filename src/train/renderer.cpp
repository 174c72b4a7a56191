// The plain-text renderer, the silent one, and the choice between them and the dashboard.
#include "ember/train/renderer.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "ember/core/error.hpp"

namespace ember::train {

std::string format_duration(double seconds) {
  if (!(seconds >= 0.0) || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[48];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", s / 3600, (s / 60) % 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", s);
  }
  return buf;
}

namespace {

/// "Loss 0.4213  Accuracy 85.20 %": the epoch values so far.
std::string metric_list(const std::vector<MetricValue>& metrics) {
  std::string out;
  for (const auto& m : metrics) {
    if (!out.empty()) out += "  ";
    out += m.name + " " + format_value(m.epoch, m.unit);
  }
  return out;
}

class TextRenderer final : public Renderer {
 public:
  TextRenderer(std::ostream& out, double interval) : out_(out), interval_(interval) {}

  void start(const TrainingInfo& info) override {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << "Training epochs " << info.first_epoch << "-" << info.num_epochs << " in "
         << info.run_dir.string() << "\n";
    out_.flush();
    last_ = Clock::now();
  }

  void update(const ProgressInfo& p, const std::vector<MetricValue>& metrics) override {
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (std::chrono::duration<double>(now - last_).count() < interval_) return;
    last_ = now;
    char head[160];
    const double pct = p.items_total == 0 ? 100.0
                                          : 100.0 * static_cast<double>(p.items_done) /
                                                static_cast<double>(p.items_total);
    std::snprintf(head, sizeof head, "[%s] epoch %zu/%zu  %5.1f%% (%zu/%zu)  %.0f items/s  ETA %s",
                  std::string(split_name(p.split)).c_str(), p.epoch, p.num_epochs, pct,
                  p.items_done, p.items_total, p.items_per_second,
                  format_duration(p.eta_seconds).c_str());
    out_ << head << "  " << metric_list(metrics) << "\n";
    out_.flush();
  }

  void end_epoch(Split split, std::size_t epoch, const std::vector<MetricValue>& metrics,
                 double seconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << "[" << split_name(split) << "] epoch " << epoch << " done in "
         << format_duration(seconds) << ": " << metric_list(metrics) << "\n";
    out_.flush();
  }

  void message(const std::string& text) override {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << text << "\n";
    out_.flush();
  }

  void finish() override {
    std::lock_guard<std::mutex> lock(mu_);
    out_.flush();
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& out_;
  double interval_;
  std::mutex mu_;
  Clock::time_point last_ = Clock::now();
};

class SilentRenderer final : public Renderer {
 public:
  void start(const TrainingInfo&) override {}
  void update(const ProgressInfo&, const std::vector<MetricValue>&) override {}
  void end_epoch(Split, std::size_t, const std::vector<MetricValue>&, double) override {}
  void message(const std::string&) override {}
  void finish() override {}
};

bool tui_wanted() {
  const char* no_tui = std::getenv("EMBER_NO_TUI");
  if (no_tui != nullptr && std::strcmp(no_tui, "") != 0 && std::strcmp(no_tui, "0") != 0) {
    return false;
  }
  if (!::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && std::strcmp(term, "dumb") != 0;
}

}  // namespace

std::unique_ptr<Renderer> make_text_renderer(std::ostream& out, double interval_seconds) {
  if (!(interval_seconds >= 0.0)) {
    ember::detail::fail<ValueError>("make_text_renderer", "interval must be >= 0 seconds, got ",
                                    interval_seconds);
  }
  return std::make_unique<TextRenderer>(out, interval_seconds);
}

std::unique_ptr<Renderer> make_renderer(RendererKind kind, double interval_seconds) {
  switch (kind) {
    case RendererKind::None:
      return std::make_unique<SilentRenderer>();
    case RendererKind::Text:
      return make_text_renderer(std::cout, interval_seconds);
    case RendererKind::Auto:
      if (!tui_wanted()) return make_text_renderer(std::cout, interval_seconds);
      [[fallthrough]];
    case RendererKind::Tui:
      if (auto tui = make_tui_renderer()) return tui;
      return make_text_renderer(std::cout, interval_seconds);
  }
  return make_text_renderer(std::cout, interval_seconds);
}

}  // namespace ember::train
