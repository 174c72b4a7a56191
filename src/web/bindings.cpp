// The C functions the WebAssembly module exports (src/web/exports.txt). src/web/ember.js
// wraps them in a small JavaScript API; nothing else should call them. A function that fails
// returns null or -1 and leaves the error's message and kind for ember_last_error*().
#include <emscripten/emscripten.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>

#include "ember/core/error.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/web/classifier.hpp"

using ember::Cpu;
using ember::web::Classifier;

namespace {

std::string g_error, g_kind;

/// The name of an exception's Ember error class, for the JavaScript EmberError's `kind`.
const char* kind_of(const std::exception& e) {
  if (dynamic_cast<const ember::ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const ember::DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const ember::IoError*>(&e)) return "IoError";
  if (dynamic_cast<const ember::ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const ember::UnsupportedError*>(&e)) return "UnsupportedError";
  if (dynamic_cast<const ember::OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const ember::Error*>(&e)) return "Error";
  return "InternalError";
}

/// Runs f(), returning its value, or `failed` after recording the exception.
template <class F, class R>
R guarded(F&& f, R failed) {
  try {
    g_error.clear();
    g_kind.clear();
    return f();
  } catch (const std::bad_alloc&) {
    // what() would only say "std::bad_alloc".
    g_error =
        "[web] out of memory: this model or batch does not fit in the WebAssembly "
        "module's memory (at most " +
        std::to_string(EMBER_WEB_MEMORY_MIB) + " MiB)";
    g_kind = "OutOfMemoryError";
  } catch (const std::exception& e) {
    g_error = e.what();
    g_kind = kind_of(e);
  } catch (...) {
    g_error = "unknown error";
    g_kind = "InternalError";
  }
  return failed;
}

}  // namespace

extern "C" {

/// A classifier from a model.safetensors file's bytes and run.json's text; null on error.
EMSCRIPTEN_KEEPALIVE Classifier* ember_load(const std::uint8_t* bytes, std::size_t n,
                                            const char* run_json) {
  return guarded(
      [&] {
        return new Classifier(std::span<const std::uint8_t>(bytes, n), std::string_view(run_json));
      },
      static_cast<Classifier*>(nullptr));
}

/// Writes [count, num_classes] probabilities of `count` images [count, C, H, W] (values in
/// [0, 1]; `n` values in all) to `out`; returns 0, or -1 on error.
EMSCRIPTEN_KEEPALIVE int ember_predict(const Classifier* c, const float* pixels, std::size_t n,
                                       std::size_t count, float* out) {
  return guarded(
      [&] {
        const auto p = c->predict(std::span<const float>(pixels, n), count);
        std::memcpy(out, p.data(), p.size() * sizeof(float));
        return 0;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int ember_num_classes(const Classifier* c) {
  return static_cast<int>(c->num_classes());
}
EMSCRIPTEN_KEEPALIVE int ember_channels(const Classifier* c) {
  return static_cast<int>(c->channels());
}
EMSCRIPTEN_KEEPALIVE int ember_size(const Classifier* c) {
  return static_cast<int>(c->size());
}
EMSCRIPTEN_KEEPALIVE const char* ember_model_name(const Classifier* c) {
  return c->model_name().c_str();
}
EMSCRIPTEN_KEEPALIVE const char* ember_class_name(const Classifier* c, int i) {
  return c->classes().at(static_cast<std::size_t>(i)).c_str();
}
EMSCRIPTEN_KEEPALIVE void ember_free(Classifier* c) {
  delete c;
}

/// Threads the kernels use (1 in the single-threaded build), and a new count (clamped to
/// 1..the team's size).
EMSCRIPTEN_KEEPALIVE int ember_threads() {
  return Cpu::num_threads();
}
EMSCRIPTEN_KEEPALIVE void ember_set_threads(int n) {
  Cpu::set_num_threads(n);
}

/// The most memory the module can have, in MiB (its build's EMBER_WEB_MEMORY_MIB).
EMSCRIPTEN_KEEPALIVE int ember_memory_mib() {
  return EMBER_WEB_MEMORY_MIB;
}

/// The message of the last failure ("[op] ..."), and its kind ("IoError", "ValueError", ...).
EMSCRIPTEN_KEEPALIVE const char* ember_last_error() {
  return g_error.c_str();
}
EMSCRIPTEN_KEEPALIVE const char* ember_last_error_kind() {
  return g_kind.c_str();
}

}  // extern "C"
