#include "ember/train/history.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/core/error.hpp"
#include "ember/store/file.hpp"

namespace ember::train {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

const char* direction_name(Direction d) {
  return d == Direction::Lowest ? "lowest" : "highest";
}

Direction parse_direction(const nlohmann::json& j, std::string_view op) {
  if (j == "lowest") return Direction::Lowest;
  if (j == "highest") return Direction::Highest;
  ember::detail::fail<ValueError>(op, "direction must be \"lowest\" or \"highest\", got ",
                                  j.dump());
}

[[noreturn]] void bad(std::string_view op, const std::string& what) {
  ember::detail::fail<ValueError>(op, what);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ember::detail::fail<IoError>("read", "cannot open '", path.string(), "'");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

bool better(double v, double best, Direction d) {
  return d == Direction::Lowest ? v < best : v > best;
}

}  // namespace

// ---- MetricHistory ------------------------------------------------------------------------

std::ptrdiff_t MetricHistory::find(Split split, const std::string& name) const {
  const auto& infos = data(split).infos;
  for (std::size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].name == name) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

void MetricHistory::declare(Split split, const MetricInfo& info) {
  const std::ptrdiff_t i = find(split, info.name);
  SplitData& d = data(split);
  if (i >= 0) {
    d.infos[static_cast<std::size_t>(i)] = info;
    return;
  }
  d.infos.push_back(info);
  d.values.emplace_back();
}

void MetricHistory::record(Split split, const std::string& name, std::size_t epoch, double value) {
  if (epoch == 0) ember::detail::fail<ValueError>("MetricHistory::record", "epochs start at 1");
  std::ptrdiff_t i = find(split, name);
  if (i < 0) {
    declare(split, MetricInfo{name, {}, Direction::Lowest});
    i = static_cast<std::ptrdiff_t>(data(split).infos.size()) - 1;
  }
  data(split).values[static_cast<std::size_t>(i)][epoch] = value;
}

const std::vector<MetricInfo>& MetricHistory::metrics(Split split) const {
  return data(split).infos;
}

std::optional<MetricInfo> MetricHistory::info(Split split, const std::string& name) const {
  const std::ptrdiff_t i = find(split, name);
  if (i < 0) return std::nullopt;
  return data(split).infos[static_cast<std::size_t>(i)];
}

std::vector<std::pair<std::size_t, double>> MetricHistory::values(Split split,
                                                                  const std::string& name) const {
  const std::ptrdiff_t i = find(split, name);
  if (i < 0) return {};
  const auto& m = data(split).values[static_cast<std::size_t>(i)];
  return {m.begin(), m.end()};
}

std::optional<double> MetricHistory::value(Split split, const std::string& name,
                                           std::size_t epoch) const {
  const std::ptrdiff_t i = find(split, name);
  if (i < 0) return std::nullopt;
  const auto& m = data(split).values[static_cast<std::size_t>(i)];
  const auto it = m.find(epoch);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

std::size_t MetricHistory::last_epoch() const {
  std::size_t last = 0;
  for (const auto& d : data_) {
    for (const auto& m : d.values) {
      if (!m.empty()) last = std::max(last, m.rbegin()->first);
    }
  }
  return last;
}

void MetricHistory::truncate(std::size_t epoch) {
  for (auto& d : data_) {
    for (auto& m : d.values) m.erase(m.upper_bound(epoch), m.end());
  }
}

nlohmann::json MetricHistory::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (Split split : {Split::Train, Split::Valid}) {
    nlohmann::json arr = nlohmann::json::array();
    const SplitData& d = data(split);
    for (std::size_t i = 0; i < d.infos.size(); ++i) {
      nlohmann::json vals = nlohmann::json::array();
      for (const auto& [e, v] : d.values[i]) vals.push_back({e, number_or_null(v)});
      arr.push_back({{"name", d.infos[i].name},
                     {"unit", d.infos[i].unit},
                     {"direction", direction_name(d.infos[i].direction)},
                     {"values", std::move(vals)}});
    }
    out[std::string(split_name(split))] = std::move(arr);
  }
  return out;
}

MetricHistory MetricHistory::from_json(const nlohmann::json& j) {
  constexpr std::string_view op = "MetricHistory::from_json";
  if (!j.is_object()) bad(op, "expected an object, got " + j.dump());
  MetricHistory h;
  for (Split split : {Split::Train, Split::Valid}) {
    const std::string key(split_name(split));
    if (!j.contains(key)) continue;
    const auto& arr = j.at(key);
    if (!arr.is_array()) bad(op, "'" + key + "' is not an array");
    for (const auto& m : arr) {
      if (!m.is_object() || !m.contains("name") || !m.at("name").is_string() ||
          !m.contains("values") || !m.at("values").is_array()) {
        bad(op, "malformed metric " + m.dump());
      }
      MetricInfo info;
      info.name = m.at("name").get<std::string>();
      info.unit = m.value("unit", std::string());
      info.direction =
          m.contains("direction") ? parse_direction(m.at("direction"), op) : Direction::Lowest;
      h.declare(split, info);
      for (const auto& ev : m.at("values")) {
        if (!ev.is_array() || ev.size() != 2 || !ev[0].is_number_unsigned() ||
            ev[0].get<std::size_t>() == 0 || !(ev[1].is_number() || ev[1].is_null())) {
          bad(op, "malformed value " + ev.dump() + " of '" + info.name + "'");
        }
        h.record(split, info.name, ev[0].get<std::size_t>(),
                 ev[1].is_null() ? kNaN : ev[1].get<double>());
      }
    }
  }
  return h;
}

std::string MetricHistory::jsonl(Split split) const {
  const SplitData& d = data(split);
  std::map<std::size_t, std::vector<std::size_t>> by_epoch;  // epoch -> metric indices
  for (std::size_t i = 0; i < d.infos.size(); ++i) {
    for (const auto& [e, v] : d.values[i]) by_epoch[e].push_back(i);
  }
  std::string out;
  for (const auto& [e, idx] : by_epoch) {
    for (std::size_t i : idx) {
      nlohmann::json line = nlohmann::json::object();
      line["epoch"] = e;
      line["metric"] = d.infos[i].name;
      line["value"] = number_or_null(d.values[i].at(e));
      out += line.dump();
      out += '\n';
    }
  }
  return out;
}

void MetricHistory::write_logs(const std::filesystem::path& run_dir) const {
  for (Split split : {Split::Train, Split::Valid}) {
    store::write_file_atomic(run_dir / (std::string(split_name(split)) + ".jsonl"), jsonl(split),
                             "write_logs");
  }
}

MetricHistory MetricHistory::read_logs(const std::filesystem::path& run_dir,
                                       const std::vector<MetricInfo>& known) {
  MetricHistory h;
  for (Split split : {Split::Train, Split::Valid}) {
    const auto path = run_dir / (std::string(split_name(split)) + ".jsonl");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    std::istringstream in(read_file(path));
    std::string line;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("epoch") ||
          !j.at("epoch").is_number_unsigned() || j.at("epoch").get<std::size_t>() == 0 ||
          !j.contains("metric") || !j.at("metric").is_string() || !j.contains("value") ||
          !(j.at("value").is_number() || j.at("value").is_null())) {
        ember::detail::fail<IoError>("read_logs", path.string(), ":", lineno,
                                     ": not a log entry: ", line);
      }
      const std::string name = j.at("metric").get<std::string>();
      if (!h.info(split, name)) {
        MetricInfo info{name, {}, Direction::Lowest};
        for (const auto& k : known) {
          if (k.name == name) info = k;
        }
        h.declare(split, info);
      }
      h.record(split, name, j.at("epoch").get<std::size_t>(),
               j.at("value").is_null() ? kNaN : j.at("value").get<double>());
    }
  }
  return h;
}

std::vector<MetricInfo> MetricHistory::builtin_metric_infos() {
  std::vector<MetricInfo> out;
  const auto add = [&](const Metric& m) { out.push_back({m.name(), m.unit(), m.direction()}); };
  add(LossMetric{});
  add(AccuracyMetric{});
  for (std::size_t k = 2; k <= 10; ++k) add(TopKAccuracyMetric{k});
  for (ClassAverage a : {ClassAverage::Macro, ClassAverage::Micro}) {
    add(PrecisionMetric{a});
    add(RecallMetric{a});
    add(F1Metric{a});
  }
  add(LearningRateMetric{});
  add(ThroughputMetric{});
  add(CpuMemoryMetric{});
  add(TensorMemoryMetric{});
  return out;
}

// ---- best epoch and early stopping ---------------------------------------------------------

std::optional<std::size_t> best_epoch(const MetricHistory& history, Split split,
                                      const std::string& metric, Direction direction) {
  std::optional<std::size_t> best;
  double best_value = 0.0;
  for (const auto& [e, v] : history.values(split, metric)) {
    if (!std::isfinite(v)) continue;
    if (!best || better(v, best_value, direction)) {
      best = e;
      best_value = v;
    }
  }
  return best;
}

bool should_stop_early(const MetricHistory& history, const EarlyStoppingConfig& config,
                       Direction direction) {
  if (config.patience == 0) {
    ember::detail::fail<ValueError>("early_stopping", "patience must be >= 1");
  }
  if (!(config.min_delta >= 0.0) || !std::isfinite(config.min_delta)) {
    ember::detail::fail<ValueError>("early_stopping", "min_delta must be finite and >= 0, got ",
                                    config.min_delta);
  }
  bool have_best = false;
  double best = 0.0;
  std::size_t since = 0;
  for (const auto& [e, v] : history.values(config.split, config.metric)) {
    const bool improved = std::isfinite(v) && (!have_best || (direction == Direction::Lowest
                                                                  ? v < best - config.min_delta
                                                                  : v > best + config.min_delta));
    if (improved) {
      have_best = true;
      best = v;
      since = 0;
    } else {
      ++since;
    }
  }
  return since >= config.patience;
}

// ---- summary ------------------------------------------------------------------------------

Summary Summary::from_history(const MetricHistory& history) {
  Summary s;
  s.epochs = history.last_epoch();
  for (Split split : {Split::Train, Split::Valid}) {
    for (const MetricInfo& info : history.metrics(split)) {
      SummaryRow row;
      row.split = split;
      row.metric = info.name;
      row.unit = info.unit;
      bool any = false;
      for (const auto& [e, v] : history.values(split, info.name)) {
        if (!std::isfinite(v)) continue;
        if (!any || v < row.min) {
          row.min = v;
          row.min_epoch = e;
        }
        if (!any || v > row.max) {
          row.max = v;
          row.max_epoch = e;
        }
        row.last = v;
        row.last_epoch = e;
        any = true;
      }
      if (any) s.rows.push_back(std::move(row));
    }
  }
  return s;
}

std::string Summary::table() const {
  const std::vector<std::string> head = {"Split", "Metric", "Min.", "Epoch", "Max.", "Epoch"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    std::string split(split_name(r.split));
    split[0] = static_cast<char>(split[0] - 'a' + 'A');
    cells.push_back({split, r.metric, format_value(r.min, r.unit), std::to_string(r.min_epoch),
                     format_value(r.max, r.unit), std::to_string(r.max_epoch)});
  }
  std::vector<std::size_t> w(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    w[c] = head[c].size();
    for (const auto& row : cells) w[c] = std::max(w[c], row[c].size());
  }
  std::ostringstream os;
  const auto line = [&](const std::vector<std::string>& row) {
    os << '|';
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool right = c >= 2;
      const std::string pad(w[c] - row[c].size(), ' ');
      os << ' ' << (right ? pad + row[c] : row[c] + pad) << " |";
    }
    os << '\n';
  };
  line(head);
  os << '|';
  for (std::size_t c = 0; c < head.size(); ++c) os << std::string(w[c] + 2, '-') << '|';
  os << '\n';
  for (const auto& row : cells) line(row);
  return os.str();
}

nlohmann::json Summary::to_json() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    arr.push_back({{"split", std::string(split_name(r.split))},
                   {"metric", r.metric},
                   {"unit", r.unit},
                   {"min", r.min},
                   {"min_epoch", r.min_epoch},
                   {"max", r.max},
                   {"max_epoch", r.max_epoch},
                   {"last", r.last},
                   {"last_epoch", r.last_epoch}});
  }
  return {{"epochs", epochs}, {"metrics", std::move(arr)}};
}

Summary Summary::from_json(const nlohmann::json& j) {
  constexpr std::string_view op = "Summary::from_json";
  try {
    Summary s;
    s.epochs = j.at("epochs").get<std::size_t>();
    for (const auto& m : j.at("metrics")) {
      SummaryRow r;
      r.split = parse_split(m.at("split").get<std::string>());
      r.metric = m.at("metric").get<std::string>();
      r.unit = m.value("unit", std::string());
      r.min = m.at("min").get<double>();
      r.min_epoch = m.at("min_epoch").get<std::size_t>();
      r.max = m.at("max").get<double>();
      r.max_epoch = m.at("max_epoch").get<std::size_t>();
      r.last = m.at("last").get<double>();
      r.last_epoch = m.at("last_epoch").get<std::size_t>();
      s.rows.push_back(std::move(r));
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    bad(op, std::string("malformed summary: ") + e.what());
  }
}

void Summary::save(const std::filesystem::path& run_dir) const {
  store::write_file_atomic(run_dir / "summary.json", to_json().dump(2) + "\n", "summary");
  store::write_file_atomic(run_dir / "summary.txt", table(), "summary");
}

Summary Summary::load(const std::filesystem::path& run_dir) {
  std::error_code ec;
  const auto json_path = run_dir / "summary.json";
  if (std::filesystem::exists(json_path, ec)) {
    nlohmann::json j = nlohmann::json::parse(read_file(json_path), nullptr, false);
    if (j.is_discarded()) {
      ember::detail::fail<IoError>("Summary::load", "'", json_path.string(), "' is not JSON");
    }
    return from_json(j);
  }
  if (!std::filesystem::exists(run_dir / "train.jsonl", ec) &&
      !std::filesystem::exists(run_dir / "valid.jsonl", ec)) {
    ember::detail::fail<IoError>("Summary::load", "'", run_dir.string(),
                                 "' has no summary.json, train.jsonl or valid.jsonl");
  }
  return from_history(MetricHistory::read_logs(run_dir));
}

std::string format_value(double value, const std::string& unit) {
  if (std::isnan(value)) return "-";
  char buf[64];
  if (unit == "%") {
    std::snprintf(buf, sizeof buf, "%.2f %%", value);
  } else if (unit == "items/s") {
    std::snprintf(buf, sizeof buf, value >= 100.0 ? "%.0f items/s" : "%.1f items/s", value);
  } else if (unit == "MiB") {
    std::snprintf(buf, sizeof buf, "%.1f MiB", value);
  } else {
    const double a = std::fabs(value);
    const char* fmt = a == 0.0 ? "%.0f" : (a < 1e-2 || a >= 1e5) ? "%.3e" : "%.4f";
    std::snprintf(buf, sizeof buf, fmt, value);
    if (!unit.empty()) return std::string(buf) + " " + unit;
  }
  return buf;
}

}  // namespace ember::train
