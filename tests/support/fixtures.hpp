// Test fixtures: expected values produced by the scripts in tests/fixtures/gen_*.py
// (PyTorch/NumPy) and committed as tests/fixtures/<name>.json. Tests never run Python.
//
// File format: {"cases": {"<case name>": {<key>: <tensor or value>, ...}, ...}}
// A tensor is {"shape": [..], "dtype": "f32", "data": [..]} with non-finite floats
// written as the strings "nan", "inf", "-inf".
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ember/core/data.hpp"

namespace ember::test {

using json = nlohmann::json;

/// Parsed tests/fixtures/<name>.json (cached). Throws IoError if missing or corrupt.
const json& load_fixture(const std::string& name);

/// A tensor object of a fixture as TensorData (dtype as written).
TensorData fixture_tensor(const json& j);

/// One case of a fixture file.
struct FixtureCase {
  std::string name;
  const json* body;
  TensorData tensor(const std::string& key) const { return fixture_tensor(body->at(key)); }
  bool has(const std::string& key) const { return body->contains(key); }
  template <class T>
  T param(const std::string& key) const {
    return body->at(key).get<T>();
  }
  const json& at(const std::string& key) const { return body->at(key); }
};

/// Every case of a fixture file whose name starts with `prefix`, in file order.
std::vector<FixtureCase> fixture_cases(const std::string& file, const std::string& prefix = "");

/// Registers one GoogleTest test per fixture case and backend: suite
/// "<suite>/<backend name>", test "<case name>". `run` executes one case for backend B.
/// Call from a static initializer (see EMBER_FIXTURE_SUITE).
template <class B>
void register_fixture_tests(const std::string& suite, const std::string& file,
                            const std::string& prefix,
                            std::function<void(const FixtureCase&)> run) {
  for (const auto& c : fixture_cases(file, prefix)) {
    auto fn = run;
    ::testing::RegisterTest((suite + "/" + B::name()).c_str(), c.name.c_str(), nullptr, nullptr,
                            __FILE__, __LINE__, [fn, c]() -> ::testing::Test* {
                              struct T : ::testing::Test {
                                std::function<void(const FixtureCase&)> f;
                                FixtureCase fc;
                                void TestBody() override { f(fc); }
                              };
                              auto* t = new T();
                              t->f = fn;
                              t->fc = c;
                              return t;
                            });
  }
}

/// Asserts approximate equality with a readable failure (no exception escapes).
inline void expect_approx(const TensorData& actual, const TensorData& expected,
                          Tolerance tol = Tolerance::balanced()) {
  try {
    actual.assert_approx_eq(expected, tol);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}
inline void expect_eq(const TensorData& actual, const TensorData& expected,
                      bool check_dtype = true) {
  try {
    actual.assert_eq(expected, check_dtype);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

}  // namespace ember::test

/// Expects `stmt` to throw exception type `E` whose message contains `substr`.
/// Wrap a statement containing commas in parentheses.
#define EMBER_EXPECT_THROW_MSG(stmt, E, substr)                          \
  do {                                                                   \
    bool ember_thrown_ = false;                                          \
    try {                                                                \
      stmt;                                                              \
    } catch (const E& e) {                                               \
      ember_thrown_ = true;                                              \
      EXPECT_NE(std::string(e.what()).find(substr), std::string::npos)   \
          << "message was: " << e.what();                                \
    } catch (const std::exception& e) {                                  \
      ADD_FAILURE() << "threw the wrong exception type: " << e.what();   \
      ember_thrown_ = true;                                              \
    }                                                                    \
    if (!ember_thrown_) ADD_FAILURE() << "expected " #E " from: " #stmt; \
  } while (0)
