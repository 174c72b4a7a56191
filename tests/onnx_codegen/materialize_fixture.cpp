// Writes a real-model fixture with its weights into a folder (build step of the generated-code
// test): materialize_fixture FIXTURE_DIR NAME OUT_DIR
#include <iostream>

#include "../onnx/fixture_util.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: materialize_fixture FIXTURE_DIR NAME OUT_DIR\n";
    return 2;
  }
  try {
    std::cout << ember::onnx::testing::materialize_fixture(argv[1], argv[2], argv[3]) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "materialize_fixture: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
