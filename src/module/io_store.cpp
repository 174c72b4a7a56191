// Module files through ember::store: safetensors writing, safetensors / PyTorch reading,
// atomic config files.
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
  const std::string ext = path.extension().string();
  if (ext == ".pt" || ext == ".pth" || ext == ".bin" || ext == ".ckpt") {
    ember::detail::fail<ValueError>(
        "save", "'", path.string(), "': Module::save writes safetensors, not PyTorch's ", ext,
        " format (torch.load could not read it); name the file *.safetensors (PyTorch reads "
        "it with safetensors.torch.load_file)");
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
