// Module files through ember::store: safetensors writing, safetensors / PyTorch reading,
// atomic config files.
#include <cctype>
#include <set>
#include <string>

#include "ember/module/config.hpp"
#include "ember/module/module.hpp"
#include "ember/store/file.hpp"
#include "ember/store/safetensors.hpp"
#include "ember/store/weights.hpp"

namespace ember::nn::detail {

void save_state(const StateDict& tensors, const std::filesystem::path& path,
                const std::map<std::string, std::string>& metadata) {
  // Ember writes safetensors only; under PyTorch's names the file would mislead torch.load
  // (and every tool that goes by the extension).
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> foreign = {".pt",  ".pth", ".bin",  ".ckpt",
                                                ".tar", ".pkl", ".onnx", ".h5"};
  if (foreign.count(ext) != 0) {
    ember::detail::fail<ValueError>(
        "save", "'", path.string(), "': Module::save writes safetensors, not the ",
        path.extension().string(),
        " format its name promises (torch.load or an ONNX reader could not read it); name the "
        "file *.safetensors (PyTorch reads it with safetensors.torch.load_file)");
  }
  store::NamedTensors named;
  named.tensors = tensors;
  named.metadata = metadata;
  store::write_safetensors(path, named);
}

std::map<std::string, TensorData> read_state(const std::filesystem::path& path,
                                             const LoadOptions& options) {
  store::ReadOptions ro;
  ro.select = options.select;
  ro.remap = options.remap;
  return store::read_weights(path, ro).into_map();
}

void write_text_atomic(const std::filesystem::path& path, const std::string& text) {
  store::write_file_atomic(path, text, "save_config");
}

}  // namespace ember::nn::detail
