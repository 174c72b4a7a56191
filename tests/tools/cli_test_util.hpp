// Helpers of the `ember` command-line tests: running the tool as a child process, a dataset
// to train on, and temporary folders.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace ember::cli::testing {

namespace fs = std::filesystem;

/// A fresh folder under the system temp folder, removed at destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string pattern = (fs::temp_directory_path() / ("ember-cli-" + tag + "-XXXXXX")).string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Lines of a text, without the newlines (no empty last line).
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

/// A started `ember` process whose stdout and stderr go to files.
class Child {
 public:
  /// Starts EMBER_CLI with `args`; output goes to `<log_prefix>.out` / `.err`.
  Child(const std::vector<std::string>& args, const fs::path& log_prefix)
      : out_(log_prefix.string() + ".out"), err_(log_prefix.string() + ".err") {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int o = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      const int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      std::vector<std::string> all{EMBER_CLI};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(EMBER_CLI, argv.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  /// Waits for the exit; the exit status, or 128 + signal number.
  int wait() {
    int status = 0;
    struct rusage usage {};
    ::wait4(pid_, &status, 0, &usage);
    max_rss_kib_ = usage.ru_maxrss;
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  /// True while the process runs.
  bool running() {
    if (waited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      waited_ = true;
      return false;
    }
    return true;
  }
  void kill(int sig) { ::kill(pid_, sig); }
  /// The peak resident memory of the process in KiB (after wait()).
  long max_rss_kib() const { return max_rss_kib_; }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  long max_rss_kib_ = 0;
  fs::path out_, err_;
};

/// What a finished `ember` run printed.
struct Result {
  int status = -1;
  std::string out, err;
};

/// Runs `ember args...` to the end.
inline Result run_ember(const std::vector<std::string>& args, const fs::path& log_prefix) {
  Child c(args, log_prefix);
  Result r;
  r.status = c.wait();
  r.out = c.out();
  r.err = c.err();
  return r;
}

/// Writes an IDX file of unsigned bytes.
inline void write_idx(const fs::path& path, const std::vector<std::uint32_t>& dims,
                      const std::vector<std::uint8_t>& values) {
  std::ofstream f(path, std::ios::binary);
  const unsigned char head[4] = {0, 0, 0x08, static_cast<unsigned char>(dims.size())};
  f.write(reinterpret_cast<const char*>(head), 4);
  for (std::uint32_t d : dims) {
    const unsigned char b[4] = {static_cast<unsigned char>(d >> 24),
                                static_cast<unsigned char>(d >> 16),
                                static_cast<unsigned char>(d >> 8), static_cast<unsigned char>(d)};
    f.write(reinterpret_cast<const char*>(b), 4);
  }
  f.write(reinterpret_cast<const char*>(values.data()),
          static_cast<std::streamsize>(values.size()));
}

/// A small Fashion-MNIST-shaped dataset in `dir`: 28x28 images of 10 classes, class c a bright
/// bar at rows 2c+4..2c+5 over noise, so a model learns it in an epoch.
inline void write_synthetic_mnist(const fs::path& dir, std::size_t train, std::size_t test) {
  fs::create_directories(dir);
  std::mt19937 gen(5);
  const auto make = [&](std::size_t n, const char* images, const char* labels) {
    std::vector<std::uint8_t> px(n * 28 * 28), lb(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = static_cast<std::uint8_t>(gen() % 10);
      lb[i] = c;
      for (std::size_t k = 0; k < 28 * 28; ++k)
        px[i * 784 + k] = static_cast<std::uint8_t>(gen() % 60);
      for (std::size_t y = 2u * c + 4u; y < 2u * c + 6u; ++y) {
        for (std::size_t x = 4; x < 24; ++x) px[i * 784 + y * 28 + x] = 230;
      }
    }
    write_idx(dir / images, {static_cast<std::uint32_t>(n), 28, 28}, px);
    write_idx(dir / labels, {static_cast<std::uint32_t>(n)}, lb);
  };
  make(train, "train-images-idx3-ubyte", "train-labels-idx1-ubyte");
  make(test, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte");
}

/// The folder of Debian's Fashion-MNIST when it is installed, else empty.
inline fs::path installed_fashion_mnist() {
  const fs::path dir = "/usr/share/datasets/fashion-mnist";
  std::error_code ec;
  return fs::exists(dir / "train-images-idx3-ubyte.gz", ec) ? dir : fs::path();
}

}  // namespace ember::cli::testing
