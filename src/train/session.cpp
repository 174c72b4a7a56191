#include "ember/train/session.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>

#include "ember/core/error.hpp"
#include "ember/store/file.hpp"

namespace ember::train {

namespace fs = std::filesystem;

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::Completed:
      return "completed";
    case StopReason::EarlyStopping:
      return "early stopping";
    case StopReason::Interrupted:
      return "interrupted";
  }
  return "completed";
}

namespace detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kStateFormat = "ember.train.checkpoint";
constexpr int kStateVersion = 1;

// ---- signals: SIGINT / SIGTERM -> graceful stop ------------------------------------------

std::atomic<bool> g_signal_stop{false};
std::mutex g_signal_mu;
int g_signal_users = 0;
struct sigaction g_old_int {
}, g_old_term{};

extern "C" void on_stop_signal(int sig) {
  g_signal_stop.store(true);
  std::signal(sig, SIG_DFL);  // a second signal ends the process as usual
}

void install_signals() {
  std::lock_guard<std::mutex> lock(g_signal_mu);
  if (g_signal_users++ > 0) return;
  g_signal_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

void uninstall_signals() {
  std::lock_guard<std::mutex> lock(g_signal_mu);
  if (--g_signal_users > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

// ---- helpers ------------------------------------------------------------------------------

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ember::detail::fail<IoError>("resume", "cannot read '", path.string(), "'");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

const Metric* find_metric(const std::vector<std::unique_ptr<Metric>>& ms, const std::string& n) {
  for (const auto& m : ms) {
    if (m->name() == n) return m.get();
  }
  return nullptr;
}

std::string names_of(const std::vector<std::unique_ptr<Metric>>& ms) {
  std::string out;
  for (const auto& m : ms) out += (out.empty() ? "" : ", ") + m->name();
  return out.empty() ? "none" : out;
}

void check_unique(const std::vector<std::unique_ptr<Metric>>& ms, Split split) {
  std::set<std::string> seen;
  for (const auto& m : ms) {
    if (!m) ember::detail::fail<ValueError>("Learner", "null metric");
    if (!seen.insert(m->name()).second) {
      ember::detail::fail<ValueError>("Learner", "metric '", m->name(),
                                      "' is registered twice for ", split_name(split));
    }
  }
}

bool holds_run(const fs::path& dir) {
  std::error_code ec;
  return !CheckpointStore(dir / "checkpoints").list().empty() ||
         fs::exists(dir / "train.jsonl", ec) || fs::exists(dir / "valid.jsonl", ec);
}

}  // namespace

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t batch) {
  const auto step = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  return step(step(step(seed) ^ epoch) ^ batch);
}

// ---- Session ------------------------------------------------------------------------------

Session::Session(LearnerOptions options, std::vector<std::unique_ptr<Metric>> train_metrics,
                 std::vector<std::unique_ptr<Metric>> valid_metrics,
                 std::shared_ptr<Renderer> renderer, std::stop_token stop)
    : options_(std::move(options)),
      train_metrics_(std::move(train_metrics)),
      valid_metrics_(std::move(valid_metrics)),
      renderer_(std::move(renderer)),
      stop_(std::move(stop)),
      store_(options_.run_dir / "checkpoints") {
  constexpr const char* op = "Learner";
  if (options_.run_dir.empty()) ember::detail::fail<ValueError>(op, "the run directory is empty");
  if (options_.num_epochs == 0) ember::detail::fail<ValueError>(op, "num_epochs must be >= 1");
  if (options_.keep_last == 0) {
    ember::detail::fail<ValueError>(op, "checkpoints: keep_last must be >= 1");
  }
  if (options_.grad_accumulation == 0) {
    ember::detail::fail<ValueError>(op, "gradient accumulation must be >= 1 batches");
  }
  if (!(options_.progress_interval >= 0.0)) {
    ember::detail::fail<ValueError>(op, "progress interval must be >= 0 seconds");
  }
  check_unique(train_metrics_, Split::Train);
  check_unique(valid_metrics_, Split::Valid);
  if (options_.best) {
    const auto& b = *options_.best;
    if (!find_metric(metrics(b.split), b.metric)) {
      if (options_.best_explicit) {
        ember::detail::fail<ValueError>(op, "best checkpoint metric '", b.metric,
                                        "' is not registered for ", split_name(b.split),
                                        " (registered: ", names_of(metrics(b.split)), ")");
      }
      options_.best.reset();
    }
  }
  if (options_.early_stopping) {
    const auto& es = *options_.early_stopping;
    if (!find_metric(metrics(es.split), es.metric)) {
      ember::detail::fail<ValueError>(op, "early stopping metric '", es.metric,
                                      "' is not registered for ", split_name(es.split),
                                      " (registered: ", names_of(metrics(es.split)), ")");
    }
    if (es.patience == 0)
      ember::detail::fail<ValueError>(op, "early stopping patience must be >= 1");
    if (!(es.min_delta >= 0.0) || !std::isfinite(es.min_delta)) {
      ember::detail::fail<ValueError>(op, "early stopping min_delta must be finite and >= 0");
    }
  }
  for (Split s : {Split::Train, Split::Valid}) {
    for (const auto& m : metrics(s)) history_.declare(s, {m->name(), m->unit(), m->direction()});
  }
  if (!renderer_) renderer_ = make_renderer(options_.renderer, options_.progress_interval);
}

Session::~Session() {
  abort();
}

void Session::abort() noexcept {
  if (started_ && !finished_) {
    finished_ = true;
    try {
      renderer_->finish();
    } catch (...) {
    }
  }
  try {
    restore_signals();
  } catch (...) {
  }
}

void Session::restore_signals() {
  if (signals_installed_) {
    uninstall_signals();
    signals_installed_ = false;
  }
}

StartPoint Session::begin(const EpochSizes& sizes) {
  constexpr const char* op = "Learner";
  if (started_) ember::detail::fail<ValueError>(op, "fit() runs once per Learner");
  started_ = true;
  sizes_ = sizes;
  const fs::path& dir = options_.run_dir;
  std::error_code ec;
  if (options_.write_files) {
    fs::create_directories(dir, ec);
    if (ec) ember::detail::fail<IoError>(op, "cannot create '", dir.string(), "': ", ec.message());
  }

  StartPoint sp;
  std::string note;
  if (options_.resume) {
    if (const auto id = store_.latest()) {
      const fs::path folder = store_.path(*id);
      const nlohmann::json state =
          nlohmann::json::parse(read_text(folder / "state.json"), nullptr, false);
      if (state.is_discarded() || !state.is_object() || state.value("format", "") != kStateFormat) {
        ember::detail::fail<IoError>("resume", "'", (folder / "state.json").string(),
                                     "' is not an Ember checkpoint state");
      }
      const auto damaged = [&](const std::string& why) {
        ember::detail::fail<IoError>("resume", "'", (folder / "state.json").string(),
                                     "' is damaged: ", why);
      };
      // The counters must be what the folder's name says (epoch-5, epoch-5-batch-120): a
      // hand-edited or corrupted state would skip epochs or batches, or restart the run.
      const auto counter = [&](const char* key) -> std::size_t {
        if (!state.contains(key) || !state.at(key).is_number_unsigned())
          damaged(std::string("'") + key + "' is not a non-negative integer");
        return state.at(key).get<std::size_t>();
      };
      if (counter("epoch") != id->epoch)
        damaged("'epoch' " + state.at("epoch").dump() + " in the folder of epoch " +
                std::to_string(id->epoch));
      if (!state.contains("partial") || !state.at("partial").is_boolean() ||
          state.at("partial").get<bool>() != id->partial)
        damaged("'partial' does not match the folder name " + folder.filename().string());
      if (id->partial) {
        if (counter("batches") != id->batches)
          damaged("'batches' " + state.at("batches").dump() + " in the folder of batch " +
                  std::to_string(id->batches));
        if (!state.contains("train_done") || !state.at("train_done").is_boolean())
          damaged("'train_done' is not a boolean");
      }
      try {
        const std::size_t epoch = state.at("epoch").get<std::size_t>();
        const bool partial = state.at("partial").get<bool>();
        sp.checkpoint = folder;
        sp.scheduler_state = state.at("scheduler");
        const MetricHistory saved = MetricHistory::from_json(state.at("history"));
        for (Split s : {Split::Train, Split::Valid}) {
          for (const auto& info : saved.metrics(s)) {
            if (!history_.info(s, info.name)) history_.declare(s, info);
            for (const auto& [e, v] : saved.values(s, info.name))
              history_.record(s, info.name, e, v);
          }
        }
        if (partial) {
          sp.epoch = epoch;
          sp.skip_batches = state.at("batches").get<std::size_t>();
          sp.train_done = state.at("train_done").get<bool>();
          if (!sp.train_done && state.contains("metrics") &&
              state.at("metrics").contains("train")) {
            pending_train_state_ = state.at("metrics").at("train");
            pending_epoch_ = epoch;
          }
        } else {
          sp.epoch = epoch + 1;
        }
      } catch (const nlohmann::json::exception& e) {
        damaged(e.what());
      }
      note = "Resuming from " + folder.string();
      if (options_.write_files) history_.write_logs(dir);
    } else {
      note = "No checkpoint in " + store_.dir().string() + ": starting at epoch 1";
    }
  } else if (options_.write_files && holds_run(dir)) {
    if (!options_.overwrite) {
      ember::detail::fail<ValueError>(op, "'", dir.string(),
                                      "' already holds a run (checkpoints or logs); resume it, "
                                      "choose another directory, or allow overwriting it");
    }
    fs::remove_all(dir / "checkpoints", ec);
    for (const char* f : {"train.jsonl", "valid.jsonl", "summary.json", "summary.txt"}) {
      fs::remove(dir / f, ec);
    }
  }
  first_epoch_ = sp.epoch;
  if (options_.handle_signals) {
    install_signals();
    signals_installed_ = true;
  }
  session_start_ = std::chrono::steady_clock::now();
  TrainingInfo info;
  info.run_dir = dir;
  info.first_epoch = sp.epoch;
  info.num_epochs = options_.num_epochs;
  for (const auto& m : train_metrics_)
    info.train_metrics.push_back({m->name(), m->unit(), m->direction()});
  for (const auto& m : valid_metrics_)
    info.valid_metrics.push_back({m->name(), m->unit(), m->direction()});
  info.history = history_;
  renderer_->start(info);
  if (!note.empty()) renderer_->message(note);
  return sp;
}

void Session::start_split(Split split, std::size_t epoch, std::size_t batches_done) {
  split_ = split;
  epoch_ = epoch;
  batches_total_ = split == Split::Train ? sizes_.train_batches : sizes_.valid_batches;
  items_total_ = split == Split::Train ? sizes_.train_items : sizes_.valid_items;
  batches_done_ = start_batches_ = std::min(batches_done, batches_total_);
  const std::size_t per_batch =
      batches_total_ == 0 ? 0 : (items_total_ + batches_total_ - 1) / batches_total_;
  items_done_ = std::min(items_total_, batches_done_ * per_batch);
  auto& ms = metrics(split);
  for (auto& m : ms) m->reset();
  if (split == Split::Train && batches_done > 0 && pending_epoch_ == epoch &&
      pending_train_state_.is_object()) {
    for (auto& m : ms) {
      const auto it = pending_train_state_.find(m->name());
      if (it != pending_train_state_.end()) m->load_state(*it);
    }
  }
  pending_train_state_ = nullptr;
  pending_epoch_ = 0;
  last_batch_values_.assign(ms.size(), kNaN);
  split_start_ = std::chrono::steady_clock::now();
}

std::vector<MetricValue> Session::values(Split s, bool batch_values) const {
  const auto& ms = s == Split::Train ? train_metrics_ : valid_metrics_;
  std::vector<MetricValue> out;
  out.reserve(ms.size());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const double v = ms[i]->value();
    out.push_back({ms[i]->name(), ms[i]->unit(),
                   batch_values && i < last_batch_values_.size() ? last_batch_values_[i] : v, v});
  }
  return out;
}

double Session::eta_seconds() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start_).count();
  if (work_done_ <= 0.0 || elapsed <= 0.0) return kNaN;
  const double per_epoch = static_cast<double>(sizes_.train_items + sizes_.valid_items);
  double left = static_cast<double>(items_total_ - std::min(items_done_, items_total_));
  if (split_ == Split::Train) left += static_cast<double>(sizes_.valid_items);
  if (options_.num_epochs > epoch_)
    left += per_epoch * static_cast<double>(options_.num_epochs - epoch_);
  return left * elapsed / work_done_;
}

void Session::record(const MetricInput& input, double learning_rate) {
  const MetricContext ctx{epoch_, batches_done_ + 1, learning_rate, device_};
  auto& ms = metrics(split_);
  for (std::size_t i = 0; i < ms.size(); ++i) last_batch_values_[i] = ms[i]->update(input, ctx);
  ++batches_done_;
  items_done_ = std::min(items_total_, items_done_ + input.batch_size);
  work_done_ += static_cast<double>(input.batch_size);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - split_start_).count();
  ProgressInfo p;
  p.split = split_;
  p.epoch = epoch_;
  p.num_epochs = options_.num_epochs;
  p.items_done = items_done_;
  p.items_total = items_total_;
  p.batches_done = batches_done_;
  p.batches_total = batches_total_;
  const std::size_t per_batch =
      batches_total_ == 0 ? 0 : (items_total_ + batches_total_ - 1) / batches_total_;
  const double items_here = static_cast<double>(items_done_) -
                            static_cast<double>(std::min(items_total_, start_batches_ * per_batch));
  p.items_per_second = secs > 0.0 ? items_here / secs : 0.0;
  p.eta_seconds = eta_seconds();
  renderer_->update(p, values(split_, true));
}

void Session::end_split() {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - split_start_).count();
  for (const auto& m : metrics(split_)) history_.record(split_, m->name(), epoch_, m->value());
  renderer_->end_epoch(split_, epoch_, values(split_, false), secs);
}

bool Session::stop_requested() const {
  return g_signal_stop.load() || stop_.stop_requested() || renderer_->stop_requested();
}

std::map<std::string, std::string> Session::model_metadata(const CheckpointId& id) const {
  std::map<std::string, std::string> meta;
  if (!options_.model_config.is_null()) meta["config"] = options_.model_config.dump();
  meta["ember.epoch"] = std::to_string(id.epoch);
  meta["ember.checkpoint"] = id.name();
  return meta;
}

void Session::save_checkpoint(const CheckpointId& id, bool train_done,
                              const std::function<void(const fs::path&)>& write,
                              const nlohmann::json& scheduler_state) {
  nlohmann::json state = {
      {"format", kStateFormat},
      {"version", kStateVersion},
      {"epoch", id.epoch},
      {"partial", id.partial},
      {"batches", id.batches},
      {"train_done", train_done},
      {"num_epochs", options_.num_epochs},
      {"grad_accumulation", options_.grad_accumulation},
      {"seed", options_.seed ? nlohmann::json(*options_.seed) : nlohmann::json()},
      {"scheduler", scheduler_state},
      {"history", history_.to_json()}};
  if (!options_.write_files) return;
  if (id.partial && !train_done) {
    nlohmann::json ms = nlohmann::json::object();
    for (const auto& m : train_metrics_) ms[m->name()] = m->state();
    state["metrics"] = {{"train", std::move(ms)}};
  }
  store_.save(id, [&](const fs::path& folder) {
    write(folder);
    store::write_file_atomic(folder / "state.json", state.dump(2) + "\n", "checkpoint");
  });
  last_checkpoint_ = store_.path(id);
  std::vector<std::size_t> keep;
  if (options_.best) {
    const auto& b = *options_.best;
    const Direction d =
        b.direction ? *b.direction : find_metric(metrics(b.split), b.metric)->direction();
    if (auto e = best_epoch(history_, b.split, b.metric, d)) keep.push_back(*e);
  }
  store_.prune(options_.keep_last, keep);
}

bool Session::end_epoch(std::size_t epoch) {
  if (options_.write_files) history_.write_logs(options_.run_dir);
  if (!options_.early_stopping) return false;
  const auto& es = *options_.early_stopping;
  const Direction d =
      es.direction ? *es.direction : find_metric(metrics(es.split), es.metric)->direction();
  if (!should_stop_early(history_, es, d)) return false;
  const auto best = best_epoch(history_, es.split, es.metric, d);
  renderer_->message("Early stopping after epoch " + std::to_string(epoch) + ": " +
                     std::string(split_name(es.split)) + " " + es.metric +
                     " has not improved for " + std::to_string(es.patience) +
                     " epochs (best at epoch " + (best ? std::to_string(*best) : std::string("-")) +
                     ")");
  return true;
}

void Session::message(const std::string& text) {
  renderer_->message(text);
}

void Session::finish(StopReason reason) {
  if (finished_) return;
  finished_ = true;
  summary_ = Summary::from_history(history_);
  std::string line;
  switch (reason) {
    case StopReason::Completed:
      line = "Training completed (" + std::to_string(history_.last_epoch()) + " epochs).";
      break;
    case StopReason::EarlyStopping:
      line = "Training stopped early after epoch " + std::to_string(history_.last_epoch()) + ".";
      break;
    case StopReason::Interrupted: {
      const auto id = CheckpointId::parse(last_checkpoint_.filename().string());
      const std::string where = !id            ? "before the first checkpoint"
                                : !id->partial ? "after epoch " + std::to_string(id->epoch)
                                               : "at epoch " + std::to_string(id->epoch) +
                                                     ", batch " + std::to_string(id->batches);
      line = "Training stopped " + where + "; checkpoint " + last_checkpoint_.string() +
             " (resume to continue).";
      break;
    }
  }
  std::exception_ptr error;
  try {
    if (options_.write_files) {
      history_.write_logs(options_.run_dir);
      summary_.save(options_.run_dir);
    }
  } catch (...) {
    error = std::current_exception();
  }
  renderer_->finish();
  restore_signals();
  if (options_.print_summary) {
    std::cout << "\n" << summary_.table() << line << "\n";
    std::cout.flush();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace detail
}  // namespace ember::train
