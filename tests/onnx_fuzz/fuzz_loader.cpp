// Mutation fuzzer of the ONNX loader (a libFuzzer-style loop without the clang runtime): takes
// seed models, mutates their bytes (bit flips, byte sets, truncation, insertion, deletion,
// splices of two seeds, varint-sized fields), and calls parse_model on each; a model that
// loads is also run once on small inputs. Every ember::Error is an expected outcome; any other
// exception, or a signal, is a crash: the input is written to crash-<n>.onnx and the program
// exits with status 1.
//
//   ember_onnx_fuzz SECONDS SEED_FILE_OR_DIR... [--out DIR]
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "ember/onnx/model.hpp"
#include "ember/onnx/runtime.hpp"

namespace fs = std::filesystem;
using namespace ember::onnx;

namespace {

std::string g_current;  // the input being tried (written out on a crash)
std::string g_out = ".";

void save_crash(const char* why) {
  const std::string path = g_out + "/crash-" + std::to_string(::getpid()) + ".onnx";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    (void)!::write(fd, g_current.data(), g_current.size());
    ::close(fd);
  }
  const std::string msg = std::string("CRASH (") + why + "): input saved to " + path + "\n";
  (void)!::write(2, msg.data(), msg.size());
}

void on_signal(int sig) {
  save_crash(strsignal(sig));
  ::_exit(1);
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string mutate(const std::string& in, const std::vector<std::string>& seeds,
                   std::mt19937_64& rng) {
  std::string s = in;
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < n; ++k) {
    if (s.empty()) s.assign(1, '\x08');
    const std::size_t pos = rng() % s.size();
    switch (rng() % 8) {
      case 0:
        s[pos] = static_cast<char>(s[pos] ^ (1 << (rng() % 8)));
        break;
      case 1:
        s[pos] = static_cast<char>(rng());
        break;
      case 2:
        s.resize(pos);
        break;
      case 3:
        s.insert(pos, 1 + rng() % 8, static_cast<char>(rng()));
        break;
      case 4:
        s.erase(pos, 1 + rng() % 16);
        break;
      case 5: {  // splice another seed
        const std::string& o = seeds[rng() % seeds.size()];
        if (!o.empty()) {
          const std::size_t a = rng() % o.size();
          s = s.substr(0, pos) + o.substr(a, 1 + rng() % 64);
        }
        break;
      }
      case 6: {  // a large varint (sizes, dims, counts)
        const char big[] = {'\xff', '\xff', '\xff', '\xff', '\x0f'};
        s.insert(pos, big, sizeof big);
        break;
      }
      default: {  // interesting byte values
        const char vals[] = {0, 1, '\x7f', '\x80', '\xff', 8, 16, 32};
        s[pos] = vals[rng() % sizeof vals];
      }
    }
  }
  return s;
}

/// Runs a loaded model once when its inputs are small float/int tensors of known shape.
void try_run(const Model& m) {
  std::vector<Value> in;
  for (const auto& i : m.graph.inputs) {
    if (i.type.kind != TypeInfo::Kind::Tensor || !i.type.has_shape) return;
    std::vector<std::int64_t> shape;
    std::int64_t n = 1;
    for (const auto& d : i.type.shape) {
      const std::int64_t v = d.known() ? d.value : 2;
      shape.push_back(v);
      n *= v;
      if (n > 4096) return;
    }
    if (shape.size() > kMaxRank) return;
    if (i.type.elem == ElemType::String) return;
    ember::DType dt;
    try {
      dt = storage_dtype(i.type.elem);
    } catch (const ember::Error&) {
      return;
    }
    in.push_back(Value::from_data(ember::TensorData::full(ember::Shape(shape), 1.0, dt),
                                  ember::Device::cpu(), i.type.elem));
  }
  Session(m, {.device = ember::Device::cpu()}).run(in);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: ember_onnx_fuzz SECONDS SEED_FILE_OR_DIR... [--out DIR]\n";
    return 2;
  }
  const double seconds = std::stod(argv[1]);
  std::vector<std::string> seeds;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--out" && i + 1 < argc) {
      g_out = argv[++i];
      continue;
    }
    const fs::path p(argv[i]);
    if (!fs::exists(p)) {
      std::cerr << "ember_onnx_fuzz: skipping missing seed path " << p << "\n";
      continue;
    }
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.path().extension() == ".onnx" && fs::file_size(e.path()) < (1 << 20))
          seeds.push_back(read(e.path()));
    } else {
      seeds.push_back(read(p));
    }
  }
  if (seeds.empty()) {
    std::cerr << "no seed models\n";
    return 2;
  }
  for (int s : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) ::signal(s, on_signal);
  std::mt19937_64 rng(12345);
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t iters = 0, loaded = 0, ran = 0, errors = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    g_current = mutate(seeds[rng() % seeds.size()], seeds, rng);
    ++iters;
    try {
      const Model m = parse_model(g_current);
      ++loaded;
      try_run(m);
      ++ran;
    } catch (const ember::Error&) {
      ++errors;
    } catch (const std::exception& e) {
      save_crash((std::string("uncaught ") + typeid(e).name() + ": " + e.what()).c_str());
      return 1;
    }
  }
  std::cout << "fuzzed " << iters << " inputs in " << seconds << " s from " << seeds.size()
            << " seeds: " << loaded << " loaded, " << ran << " ran, " << errors
            << " ember::Error, 0 crashes\n";
  return 0;
}
