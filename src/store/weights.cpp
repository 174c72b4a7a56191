// detect_format and read_weights.
#include "ember/store/weights.hpp"

#include <fstream>

#include "ember/store/file.hpp"
#include "ember/store/pytorch.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::store {

WeightsFormat detect_format(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".safetensors") return WeightsFormat::Safetensors;
  if (ext == ".pt" || ext == ".pth") return WeightsFormat::PyTorch;
  std::ifstream in = open_for_reading(path, "detect_format");
  unsigned char head[9] = {};
  in.read(reinterpret_cast<char*>(head), 9);
  const auto n = in.gcount();
  if (n >= 4 && head[0] == 'P' && head[1] == 'K' &&
      ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))) {
    return WeightsFormat::PyTorch;
  }
  // Before the pickle check: a header length of 0x0180..0x0580 also starts with 0x80.
  if (n == 9 && head[8] == '{') return WeightsFormat::Safetensors;
  if (n >= 2 && head[0] == 0x80 && head[1] <= 5) return WeightsFormat::PyTorch;
  detail::fail<IoError>("detect_format", "'", path.string(),
                        "': unrecognised weights format (neither a safetensors file nor a "
                        "torch.save zip archive)");
}

NamedTensors read_weights(const std::filesystem::path& path, const ReadOptions& options) {
  NamedTensors t;
  if (detect_format(path) == WeightsFormat::PyTorch) {
    t = read_pytorch(path, PyTorchOptions{.select = options.select});
  } else {
    t = read_safetensors(path);
    if (!options.select.empty()) {
      const std::string prefix = options.select + ".";
      NamedTensors part;
      part.metadata = std::move(t.metadata);
      for (auto& [name, data] : t.tensors) {
        if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) {
          part.tensors.emplace_back(name.substr(prefix.size()), std::move(data));
        }
      }
      if (part.tensors.empty()) {
        detail::fail<IoError>("read_weights", "'", path.string(), "': no tensor name starts with '",
                              prefix, "'");
      }
      t = std::move(part);
    }
  }
  remap_keys(t, options.remap);
  return t;
}

}  // namespace ember::store
