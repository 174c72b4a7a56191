// The terminal dashboard (Burn's ratatui TUI, here with ncurses): a metric table, a line plot
// of the selected metric for train and valid (braille dots in a UTF-8 locale, ASCII
// otherwise), a progress bar with items/s and ETA, and the stop prompt.
//
// Threads: the training thread calls update()/end_epoch()/message(), which copy numbers into
// `shared_` under `mu_`. Only the UI thread calls ncurses after construction: it polls the
// keyboard (100 ms timeout), copies what it draws under the mutex, and draws without it.
#include <curses.h>
#include <langinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/train/renderer.hpp"

namespace ember::train {

namespace {

constexpr std::size_t kMaxPoints = 20000;  // per series; older points are merged in pairs
constexpr int kTrainPair = 1, kValidPair = 2, kBothPair = 3, kAccentPair = 4;

using Points = std::vector<std::pair<double, double>>;  // (x in epochs, y)

void add_point(Points& pts, double x, double y) {
  pts.emplace_back(x, y);
  if (pts.size() <= kMaxPoints) return;
  Points merged;
  merged.reserve(pts.size() / 2 + 1);
  for (std::size_t i = 0; i + 1 < pts.size(); i += 2) {
    merged.emplace_back((pts[i].first + pts[i + 1].first) / 2,
                        (pts[i].second + pts[i + 1].second) / 2);
  }
  if (pts.size() % 2 == 1) merged.push_back(pts.back());
  pts = std::move(merged);
}

/// UTF-8 encoding of the braille pattern with dot bits `bits` (U+2800 + bits).
std::string braille(unsigned bits) {
  const unsigned cp = 0x2800u + bits;
  std::string s(3, '\0');
  s[0] = static_cast<char>(0xE0 | (cp >> 12));
  s[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  s[2] = static_cast<char>(0x80 | (cp & 0x3F));
  return s;
}

/// Dot (dx, dy) of a 2x4 braille cell -> its bit.
unsigned braille_bit(int dx, int dy) {
  static const unsigned left[4] = {0x01, 0x02, 0x04, 0x40};
  static const unsigned right[4] = {0x08, 0x10, 0x20, 0x80};
  return dx == 0 ? left[dy] : right[dy];
}

/// A grid of dots, `sx` x `sy` dots per cell.
struct Canvas {
  int cols, rows, sx, sy;
  std::vector<unsigned> cells;  // bits per cell
  Canvas(int c, int r, int dots_x, int dots_y)
      : cols(c), rows(r), sx(dots_x), sy(dots_y), cells(static_cast<std::size_t>(c * r), 0) {}
  int width() const { return cols * sx; }
  int height() const { return rows * sy; }
  void set(int x, int y) {
    if (x < 0 || y < 0 || x >= width() || y >= height()) return;
    const std::size_t i = static_cast<std::size_t>((y / sy) * cols + x / sx);
    cells[i] |= sx == 2 ? braille_bit(x % 2, y % 4) : 1u;
  }
  void line(int x0, int y0, int x1, int y1) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int stx = x0 < x1 ? 1 : -1, sty = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
      set(x0, y0);
      if (x0 == x1 && y0 == y1) break;
      const int e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += stx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sty;
      }
    }
  }
};

/// What the UI thread copies out of the shared state for one frame.
struct Frame {
  std::vector<std::string> names;  // every metric, train first
  std::map<std::string, std::string> units;
  std::map<std::string, double> train_values, valid_values;  // latest epoch values
  Points train_points, valid_points;                         // of the selected metric
  ProgressInfo progress{};
  bool have_progress = false;
  std::string run_dir, message;
};

class TuiRenderer final : public Renderer {
 public:
  explicit TuiRenderer(SCREEN* screen, bool utf8, std::string old_locale)
      : screen_(screen), utf8_(utf8), old_locale_(std::move(old_locale)) {}
  ~TuiRenderer() override { finish(); }

  void start(const TrainingInfo& info) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shared_.run_dir = info.run_dir.string();
      for (Split split : {Split::Train, Split::Valid}) {
        const auto& infos = split == Split::Train ? info.train_metrics : info.valid_metrics;
        for (const auto& m : infos) declare(m.name, m.unit);
        for (const auto& m : info.history.metrics(split)) {
          declare(m.name, m.unit);
          for (const auto& [e, v] : info.history.values(split, m.name)) {
            if (!std::isfinite(v)) continue;
            add_point(series(split)[m.name], static_cast<double>(e), v);
            values(split)[m.name] = v;
          }
        }
      }
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }

  void update(const ProgressInfo& p, const std::vector<MetricValue>& metrics) override {
    const double frac = p.batches_total == 0 ? 1.0
                                             : static_cast<double>(p.batches_done) /
                                                   static_cast<double>(p.batches_total);
    const double x = static_cast<double>(p.epoch - 1) + frac;
    std::lock_guard<std::mutex> lock(mu_);
    shared_.progress = p;
    shared_.have_progress = true;
    for (const auto& m : metrics) {
      declare(m.name, m.unit);
      if (std::isfinite(m.batch)) add_point(series(p.split)[m.name], x, m.batch);
      values(p.split)[m.name] = m.epoch;
    }
  }

  void end_epoch(Split split, std::size_t, const std::vector<MetricValue>& metrics,
                 double) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& m : metrics) values(split)[m.name] = m.epoch;
  }

  void message(const std::string& text) override {
    std::lock_guard<std::mutex> lock(mu_);
    shared_.message = text;
  }

  bool stop_requested() const override { return stop_.load(); }

  void finish() override {
    if (finished_) return;
    finished_ = true;
    done_.store(true);
    if (thread_.joinable()) {
      thread_.join();
    } else {
      set_term(screen_);
      endwin();
    }
    delscreen(screen_);
    std::setlocale(LC_CTYPE, old_locale_.c_str());
  }

 private:
  struct Shared {
    std::vector<std::string> names;
    std::map<std::string, std::string> units;
    std::map<std::string, Points> train_series, valid_series;
    std::map<std::string, double> train_values, valid_values;
    ProgressInfo progress{};
    bool have_progress = false;
    std::string run_dir, message;
  };

  // Under mu_.
  void declare(const std::string& name, const std::string& unit) {
    if (shared_.units.emplace(name, unit).second) shared_.names.push_back(name);
  }
  std::map<std::string, Points>& series(Split s) {
    return s == Split::Train ? shared_.train_series : shared_.valid_series;
  }
  std::map<std::string, double>& values(Split s) {
    return s == Split::Train ? shared_.train_values : shared_.valid_values;
  }

  Frame snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    Frame f;
    f.names = shared_.names;
    f.units = shared_.units;
    f.train_values = shared_.train_values;
    f.valid_values = shared_.valid_values;
    f.progress = shared_.progress;
    f.have_progress = shared_.have_progress;
    f.run_dir = shared_.run_dir;
    f.message = shared_.message;
    if (!f.names.empty()) {
      selected_ %= f.names.size();
      const std::string& name = f.names[selected_];
      if (auto it = shared_.train_series.find(name); it != shared_.train_series.end())
        f.train_points = it->second;
      if (auto it = shared_.valid_series.find(name); it != shared_.valid_series.end())
        f.valid_points = it->second;
    }
    return f;
  }

  // ---- UI thread ----------------------------------------------------------------------------

  void loop() {
    set_term(screen_);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, FALSE);
    timeout(100);
    curs_set(0);
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(kTrainPair, COLOR_GREEN, -1);
      init_pair(kValidPair, COLOR_YELLOW, -1);
      init_pair(kBothPair, COLOR_CYAN, -1);
      init_pair(kAccentPair, COLOR_CYAN, -1);
      colors_ = true;
    }
    while (!done_.load()) {
      draw(snapshot());
      const int ch = getch();
      if (ch != ERR) on_key(ch);
    }
    draw(snapshot());
    endwin();
  }

  void on_key(int ch) {
    if (prompt_) {
      if (ch == 'y' || ch == 'Y') {
        prompt_ = false;
        stop_.store(true);
        std::lock_guard<std::mutex> lock(mu_);
        shared_.message = "Stopping: finishing the current iteration, then writing a checkpoint";
      } else if (ch == 'n' || ch == 'N' || ch == 27 || ch == 'q') {
        prompt_ = false;
      }
      return;
    }
    switch (ch) {
      case KEY_RIGHT:
      case KEY_DOWN:
        ++selected_;
        break;
      case KEY_LEFT:
      case KEY_UP: {
        std::lock_guard<std::mutex> lock(mu_);
        const std::size_t n = std::max<std::size_t>(shared_.names.size(), 1);
        selected_ = (selected_ % n + n - 1) % n;
        break;
      }
      case 'r':
      case 'R':
        full_ = !full_;
        break;
      case 'q':
      case 'Q':
        if (!stop_.load()) prompt_ = true;
        break;
      default:
        break;
    }
  }

  void attr(int pair, bool on) {
    if (!colors_) return;
    if (on) {
      attron(COLOR_PAIR(pair));
    } else {
      attroff(COLOR_PAIR(pair));
    }
  }

  void put(int y, int x, const std::string& s, int max_width) {
    if (max_width <= 0 || y < 0 || y >= LINES) return;
    mvaddnstr(y, x, s.c_str(), static_cast<int>(std::min<std::size_t>(s.size(), max_width)));
  }

  void draw(const Frame& f) {
    erase();
    const int H = LINES, W = COLS;
    if (H < 12 || W < 50) {
      put(0, 0, "Ember: terminal too small for the dashboard", W);
      draw_progress(f, H - 2, W);
      refresh();
      return;
    }
    // Title.
    std::string title = " Ember training";
    if (f.have_progress) {
      title += "  epoch " + std::to_string(f.progress.epoch) + "/" +
               std::to_string(f.progress.num_epochs) + "  [" +
               std::string(split_name(f.progress.split)) + "]";
    }
    title += "  " + f.run_dir;
    attron(A_REVERSE);
    put(0, 0, title + std::string(static_cast<std::size_t>(std::max(0, W)), ' '), W);
    attroff(A_REVERSE);

    const int table_w = std::min(46, W / 2 - 2);
    const int body_top = 2, body_bottom = H - 6;  // rows of the metric table and the plot
    draw_table(f, body_top, table_w, body_bottom);
    draw_plot(f, body_top, table_w + 2, W - table_w - 3, body_bottom - body_top + 1);
    draw_progress(f, H - 4, W);
    put(H - 2, 1, f.message, W - 2);
    attron(A_DIM);
    put(H - 1, 1,
        utf8_ ? "\u2190/\u2192 metric   r recent/full history   q stop"
              : "<-/-> metric   r recent/full history   q stop",
        W - 2);
    attroff(A_DIM);
    if (prompt_) draw_prompt(H, W);
    refresh();
  }

  void draw_table(const Frame& f, int top, int width, int bottom) {
    const int name_w = std::max(8, width - 28);  // "> " + name + 2 x " %12s"
    char buf[256];
    attron(A_BOLD);
    std::snprintf(buf, sizeof buf, "  %-*s %12s %12s", name_w, "Metric", "Train", "Valid");
    put(top, 0, buf, width);
    attroff(A_BOLD);
    for (std::size_t i = 0; i < f.names.size(); ++i) {
      const int y = top + 1 + static_cast<int>(i);
      if (y > bottom) break;
      const std::string& name = f.names[i];
      const std::string& unit = f.units.at(name);
      const auto get = [&](const std::map<std::string, double>& m) {
        const auto it = m.find(name);
        if (it == m.end()) return std::string("-");
        std::string cell = format_value(it->second, unit);
        return cell.size() > 12 ? format_value(it->second) : cell;  // the number alone
      };
      const bool sel = i == selected_ % std::max<std::size_t>(f.names.size(), 1);
      std::snprintf(buf, sizeof buf, "%s %-*.*s %12s %12s", sel ? ">" : " ", name_w, name_w,
                    name.c_str(), get(f.train_values).c_str(), get(f.valid_values).c_str());
      if (sel) attron(A_REVERSE);
      put(y, 0, buf, width);
      if (sel) attroff(A_REVERSE);
    }
  }

  void draw_plot(const Frame& f, int top, int left, int width, int height) {
    if (f.names.empty() || width < 20 || height < 5) return;
    const std::string& name = f.names[selected_ % f.names.size()];
    const std::string& unit = f.units.at(name);
    std::string head = name + (unit.empty() ? "" : " (" + unit + ")") +
                       (full_ ? "  full history" : "  recent (last epoch)");
    attron(A_BOLD);
    put(top, left, head, width);
    attroff(A_BOLD);
    const std::string mark = utf8_ ? "\u2501\u2501" : "--";
    int lx = left + static_cast<int>(head.size()) + 3;
    if (lx + 20 < left + width) {
      attr(kTrainPair, true);
      put(top, lx, mark + " train", 16);
      attr(kTrainPair, false);
      attr(kValidPair, true);
      put(top, lx + 10, mark + " valid", 16);
      attr(kValidPair, false);
    }

    // Visible range.
    double xmax = 0.0;
    for (const auto* pts : {&f.train_points, &f.valid_points}) {
      if (!pts->empty()) xmax = std::max(xmax, pts->back().first);
    }
    const double x0 = full_ ? 0.0 : std::max(0.0, xmax - 1.0);
    const double x1 = std::max(xmax, x0 + 1e-9);
    double y0 = std::numeric_limits<double>::infinity(), y1 = -y0;
    for (const auto* pts : {&f.train_points, &f.valid_points}) {
      for (const auto& [x, y] : *pts) {
        if (x < x0 || !std::isfinite(y)) continue;
        y0 = std::min(y0, y);
        y1 = std::max(y1, y);
      }
    }
    const int label_w = 11;
    const int cols = width - label_w - 1, rows = height - 3;
    const int ctop = top + 1;
    if (!(y0 <= y1)) {
      put(ctop + rows / 2, left + label_w + cols / 2 - 6, "(no data yet)", width);
      return;
    }
    if (y1 - y0 < 1e-12) {
      const double pad = std::max(std::fabs(y0) * 0.05, 1e-6);
      y0 -= pad;
      y1 += pad;
    }
    // Axis labels and frame.
    put(ctop, left, format_value(y1, ""), label_w - 1);
    put(ctop + rows - 1, left, format_value(y0, ""), label_w - 1);
    put(ctop + (rows - 1) / 2, left, format_value((y0 + y1) / 2, ""), label_w - 1);
    for (int r = 0; r < rows; ++r) mvaddch(ctop + r, left + label_w - 1, ACS_VLINE);
    mvaddch(ctop + rows, left + label_w - 1, ACS_LLCORNER);
    mvhline(ctop + rows, left + label_w, ACS_HLINE, cols);
    char xb[64];
    std::snprintf(xb, sizeof xb, "%.2f", x0);
    put(ctop + rows + 1, left + label_w, xb, cols);
    std::snprintf(xb, sizeof xb, "%.2f epochs", x1);
    put(ctop + rows + 1, left + label_w + cols - static_cast<int>(std::strlen(xb)), xb, cols);

    const int sx = utf8_ ? 2 : 1, sy = utf8_ ? 4 : 1;
    Canvas train(cols, rows, sx, sy), valid(cols, rows, sx, sy);
    const auto plot = [&](const Points& pts, Canvas& c) {
      bool have = false;
      int px = 0, py = 0;
      for (const auto& [x, y] : pts) {
        if (x < x0 || !std::isfinite(y)) continue;
        const int dx = static_cast<int>(std::lround((x - x0) / (x1 - x0) * (c.width() - 1)));
        const int dy =
            static_cast<int>(std::lround((1.0 - (y - y0) / (y1 - y0)) * (c.height() - 1)));
        if (have) {
          c.line(px, py, dx, dy);
        } else {
          c.set(dx, dy);
        }
        px = dx;
        py = dy;
        have = true;
      }
    };
    plot(f.train_points, train);
    plot(f.valid_points, valid);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const std::size_t i = static_cast<std::size_t>(r * cols + c);
        const unsigned t = train.cells[i], v = valid.cells[i];
        if ((t | v) == 0) continue;
        const int pair = t && v ? kBothPair : t ? kTrainPair : kValidPair;
        attr(pair, true);
        if (utf8_) {
          mvaddstr(ctop + r, left + label_w + c, braille(t | v).c_str());
        } else {
          mvaddch(ctop + r, left + label_w + c, t && v ? '#' : t ? '*' : 'o');
        }
        attr(pair, false);
      }
    }
  }

  void draw_progress(const Frame& f, int y, int W) {
    if (!f.have_progress || y < 1) return;
    const ProgressInfo& p = f.progress;
    const double frac =
        p.items_total == 0 ? 1.0
                           : static_cast<double>(p.items_done) / static_cast<double>(p.items_total);
    char info[160];
    std::snprintf(info, sizeof info, " %5.1f%%  %zu/%zu items  %.0f items/s", 100.0 * frac,
                  p.items_done, p.items_total, p.items_per_second);
    std::string label = p.split == Split::Train ? "Train " : "Valid ";
    const int bar_w = std::max(10, W - static_cast<int>(label.size() + std::strlen(info)) - 6);
    const int filled = static_cast<int>(std::lround(frac * bar_w));
    std::string bar = "[";
    for (int i = 0; i < bar_w; ++i) {
      if (utf8_) {
        bar += i < filled ? "\u2588" : "\u2591";
      } else {
        bar += i < filled ? '#' : '-';
      }
    }
    bar += "]";
    attron(A_BOLD);
    put(y, 1, label, W - 1);
    attroff(A_BOLD);
    attr(kAccentPair, true);
    mvaddstr(y, 1 + static_cast<int>(label.size()), bar.c_str());
    attr(kAccentPair, false);
    put(y, 1 + static_cast<int>(label.size()) + bar_w + 2, info, W);
    char line[160];
    std::snprintf(line, sizeof line, "Epoch %zu/%zu   batch %zu/%zu   ETA %s", p.epoch,
                  p.num_epochs, p.batches_done, p.batches_total,
                  format_duration(p.eta_seconds).c_str());
    put(y + 1, 1, line, W - 2);
  }

  void draw_prompt(int H, int W) {
    const std::string text = "Stop training? (y/n)";
    const int w = static_cast<int>(text.size()) + 6, h = 3;
    const int top = H / 2 - 1, left = std::max(0, (W - w) / 2);
    attron(A_BOLD);
    for (int r = 0; r < h; ++r) mvhline(top + r, left, ' ', w);
    mvaddch(top - 1, left - 1, ACS_ULCORNER);
    mvhline(top - 1, left, ACS_HLINE, w);
    mvaddch(top - 1, left + w, ACS_URCORNER);
    mvvline(top, left - 1, ACS_VLINE, h);
    mvvline(top, left + w, ACS_VLINE, h);
    mvaddch(top + h, left - 1, ACS_LLCORNER);
    mvhline(top + h, left, ACS_HLINE, w);
    mvaddch(top + h, left + w, ACS_LRCORNER);
    put(top + 1, left + 3, text, w - 3);
    attroff(A_BOLD);
  }

  SCREEN* screen_;
  bool utf8_;
  std::string old_locale_;
  std::mutex mu_;
  Shared shared_;
  std::atomic<bool> stop_{false}, done_{false};
  bool finished_ = false;
  std::thread thread_;
  // UI thread only (selected_ is also read in snapshot(), which runs on the UI thread).
  std::size_t selected_ = 0;
  bool full_ = true, prompt_ = false, colors_ = false;
};

}  // namespace

std::unique_ptr<Renderer> make_tui_renderer() {
  if (!::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) return nullptr;
  const char* old = std::setlocale(LC_CTYPE, nullptr);
  std::string old_locale = old != nullptr ? old : "C";
  std::setlocale(LC_CTYPE, "");
  const char* codeset = nl_langinfo(CODESET);
  const bool utf8 = codeset != nullptr &&
                    (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  if (screen == nullptr) {
    std::setlocale(LC_CTYPE, old_locale.c_str());
    return nullptr;
  }
  return std::make_unique<TuiRenderer>(screen, utf8, std::move(old_locale));
}

}  // namespace ember::train
