// An image classifier trained by `ember train`, loaded from bytes: what the WebAssembly
// binding (src/web/bindings.cpp, wrapped by src/web/ember.js) exposes to JavaScript. The same
// class runs natively (tests/wasm/native_reference.cpp) so the two can be compared.
//
//   web::Classifier c(safetensors_bytes, run_json_text);   // model.safetensors + run.json
//   std::vector<float> p = c.predict(pixels, 1);           // [1, C*H*W] in [0, 1] -> [1, K]
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ember::web {

class Classifier {
 public:
  /// Loads the weights `safetensors` (a model.safetensors file's bytes) of the model that
  /// `run_json` (the text of the run's run.json) describes: its architecture ("cnn" or
  /// "mlp" with its config), the image shape [channels, size, size], the normalisation
  /// (mean, std) and the class names. Throws ember::Error ("[web] ..."): IoError for bytes
  /// that are not a safetensors file, ValueError for JSON that is not a run configuration
  /// or weights of another architecture (their recorded config differs, or the keys or
  /// shapes do not match).
  Classifier(std::span<const std::uint8_t> safetensors, std::string_view run_json);
  ~Classifier();
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;

  /// Class probabilities (softmax of the logits, computed in double) of `count` images:
  /// `pixels` holds count * channels * size * size values in [0, 1] (light objects on dark,
  /// as Fashion-MNIST), row-major [count, C, H, W]; returns [count, num_classes]. Throws
  /// ShapeError when the sizes disagree, ValueError when the model's outputs are not finite.
  std::vector<float> predict(std::span<const float> pixels, std::size_t count) const;

  /// "cnn" or "mlp".
  const std::string& model_name() const;
  std::int64_t channels() const;
  /// Images are size x size.
  std::int64_t size() const;
  /// Outputs per image.
  std::int64_t num_classes() const;
  /// Class names by label (from run.json; the label's number when it has none).
  const std::vector<std::string>& classes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::web
