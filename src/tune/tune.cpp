// Autotune: timing candidates and persisting winners (see tune.hpp).
#include "ember/tune/tune.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ember/kernel/cache.hpp"

namespace ember::tune {

namespace fs = std::filesystem;

std::string Key::str() const {
  std::string s = op + "|";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "|" + dtype + "|" + device;
}

std::uint64_t bucket(std::uint64_t n) {
  if (n <= 1) return n;
  std::uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

Key make_key(const std::string& op, const std::vector<std::uint64_t>& shape,
             const std::string& dtype, const kernel::ComputeDevice& device) {
  Key k{op, {}, dtype, {}};
  for (std::uint64_t d : shape) k.shape.push_back(bucket(d));
  const auto& p = device.properties();
  k.device = p.kind + " " + p.name + " " + p.driver;
  return k;
}

bool Tuner::enabled() {
  const char* v = std::getenv("EMBER_AUTOTUNE");
  return !(v && std::string(v) == "0");
}

fs::path Tuner::default_path() {
  if (const char* d = std::getenv("EMBER_CACHE_DIR"); d && *d) return fs::path(d) / "autotune.json";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "ember" / "autotune.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "ember" / "autotune.json";
  return {};
}

Tuner& Tuner::global() {
  static Tuner* t = new Tuner(default_path());  // never destroyed: used until exit
  return *t;
}

Tuner::Tuner(fs::path file) : file_(std::move(file)) {
  load();
}

void Tuner::load() {
  if (file_.empty()) return;
  std::ifstream f(file_);
  if (!f) return;
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    if (j.value("version", 0) != 1) return;
    for (const auto& [key, e] : j.at("entries").items()) {
      winners_[key] = e.at("winner").get<std::string>();
      times_[key] = e.value("times_ms", std::map<std::string, double>{});
      failed_[key] = e.value("failed", std::map<std::string, std::string>{});
    }
  } catch (const nlohmann::json::exception&) {
    // a damaged file is ignored (and replaced on the next save): tuning just runs again
  }
}

void Tuner::save() const {
  if (file_.empty()) return;
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [key, w] : winners_) {
    auto t = times_.find(key);
    entries[key] = {
        {"winner", w},
        {"times_ms", t == times_.end() ? nlohmann::json::object() : nlohmann::json(t->second)}};
    if (auto f = failed_.find(key); f != failed_.end() && !f->second.empty())
      entries[key]["failed"] = f->second;  // candidate -> its error
  }
  const nlohmann::json j = {{"version", 1}, {"entries", entries}};
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  const fs::path tmp = file_.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return;  // the cache is an optimisation: no error
    f << j.dump(2) << "\n";
  }
  fs::rename(tmp, file_, ec);
  if (ec) fs::remove(tmp, ec);
}

std::optional<std::string> Tuner::winner(const Key& key) const {
  std::lock_guard lock(mu_);
  auto it = winners_.find(key.str());
  if (it == winners_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, double> Tuner::timings(const Key& key) const {
  std::lock_guard lock(mu_);
  auto it = times_.find(key.str());
  return it == times_.end() ? std::map<std::string, double>{} : it->second;
}

bool Tuner::log_enabled() {
  const char* v = std::getenv("EMBER_AUTOTUNE_LOG");
  return v && *v && std::string(v) != "0";
}

bool Tuner::vendor_enabled() {
  const char* v = std::getenv("EMBER_VENDOR_CANDIDATES");
  return v && std::string(v) == "1";
}

namespace {

/// "ember_tiled 1.234 ms, cublaslt 0.456 ms, other failed"
std::string describe(const std::map<std::string, double>& times,
                     const std::map<std::string, std::string>& failed) {
  std::string s;
  char ms[32];
  for (const auto& [name, t] : times) {
    std::snprintf(ms, sizeof ms, "%.4g", t);
    s += (s.empty() ? "" : ", ") + name + " " + ms + " ms";
  }
  for (const auto& [name, why] : failed)
    s += (s.empty() ? "" : ", ") + name + " failed" + (why.empty() ? "" : " (" + why + ")");
  return s;
}

}  // namespace

std::size_t Tuner::choose(const Key& key, const std::vector<Candidate>& candidates,
                          kernel::ComputeDevice& device) {
  if (candidates.empty()) ember::detail::fail<ValueError>("autotune " + key.op, "no candidates");
  if (!enabled()) return 0;
  const std::string k = key.str();
  {
    // A remembered winner stands while every candidate offered now was part of that tuning
    // (timed or failed); a new one (cuBLASLt installed since) makes the key tune again.
    std::lock_guard lock(mu_);
    auto w = winners_.find(k);
    if (w != winners_.end()) {
      static const std::map<std::string, double> no_times;
      static const std::map<std::string, std::string> no_failures;
      const auto t = times_.find(k);
      const auto f = failed_.find(k);
      const auto& times = t == times_.end() ? no_times : t->second;
      const auto& failed = f == failed_.end() ? no_failures : f->second;
      bool covered = true;
      std::size_t index = candidates.size();
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const std::string& name = candidates[i].name;
        covered = covered && (times.count(name) || failed.count(name));
        if (name == w->second) index = i;
      }
      if (covered && index < candidates.size()) {
        if (log_enabled() && logged_.insert(k).second)
          std::fprintf(stderr, "[ember autotune] %s: %s (remembered; %s)\n", k.c_str(),
                       w->second.c_str(), describe(times, failed).c_str());
        return index;
      }
    }
  }
  std::map<std::string, double> times;
  std::map<std::string, std::string> failed;
  std::exception_ptr first_error;
  std::size_t best = candidates.size();
  double best_ms = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    try {
      candidates[i].run();  // warm-up: compilation, first-touch
      device.sync();
      std::vector<double> ms;
      for (int r = 0; r < 5; ++r) ms.push_back(device.time_ms(candidates[i].run));
      std::sort(ms.begin(), ms.end());
      times[candidates[i].name] = ms[2];
      if (ms[2] < best_ms) {
        best_ms = ms[2];
        best = i;
      }
    } catch (const std::exception& e) {
      if (!first_error) first_error = std::current_exception();
      failed[candidates[i].name] = std::string(e.what()).substr(0, 300);
    }
  }
  if (best == candidates.size()) std::rethrow_exception(first_error);
  std::lock_guard lock(mu_);
  winners_[k] = candidates[best].name;
  if (log_enabled()) {
    logged_.insert(k);
    std::fprintf(stderr, "[ember autotune] %s: %s -> %s\n", k.c_str(),
                 describe(times, failed).c_str(), candidates[best].name.c_str());
  }
  times_[k] = std::move(times);
  failed_[k] = std::move(failed);
  save();
  return best;
}

}  // namespace ember::tune
