// detect_format and read_weights.
#include "ember/store/weights.hpp"

#include <fstream>

#include "ember/store/file.hpp"
#include "ember/store/pytorch.hpp"
#include "ember/store/safetensors.hpp"
#include "lazy.hpp"

namespace ember::store {

WeightsFormat detect_format(const std::filesystem::path& path) {
  // The content decides (a safetensors file saved under a .pt name loads as what it is);
  // the extension only when the first bytes are neither format, so that the reader of the
  // named format reports what is wrong with the file (truncated header, not a zip, ...).
  const std::string ext = path.extension().string();
  const bool known = ext == ".safetensors" || ext == ".pt" || ext == ".pth";
  const WeightsFormat named =
      ext == ".safetensors" ? WeightsFormat::Safetensors : WeightsFormat::PyTorch;
  std::error_code ec;
  // Missing, a folder, ...: the named format's reader says so in its own words.
  if (known && !std::filesystem::is_regular_file(path, ec)) return named;
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
  if (known) return named;
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

WeightsReader::WeightsReader(const std::filesystem::path& path, const ReadOptions& options) {
  if (detect_format(path) == WeightsFormat::PyTorch) {
    impl_ = internal::open_pytorch_lazy(path, PyTorchOptions{.select = options.select});
  } else {
    impl_ = internal::open_safetensors_lazy(path);
  }
  // The names as read_weights gives them: the safetensors selection by prefix, then remap
  // (through remap_keys on data-less entries, for its very checks and errors).
  NamedTensors names;
  const std::string prefix = options.select + ".";
  const bool by_prefix = !options.select.empty() && detect_format(path) != WeightsFormat::PyTorch;
  for (std::size_t i = 0; i < impl_->entries.size(); ++i) {
    const std::string& n = impl_->entries[i].name;
    if (!by_prefix) {
      names.tensors.emplace_back(n, TensorData());
    } else if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0) {
      names.tensors.emplace_back(n.substr(prefix.size()), TensorData());
    } else {
      continue;
    }
    index_.push_back(i);
  }
  if (by_prefix && index_.empty()) {
    detail::fail<IoError>("read_weights", "'", path.string(), "': no tensor name starts with '",
                          prefix, "'");
  }
  remap_keys(names, options.remap);
  for (auto& [n, d] : names.tensors) names_.push_back(std::move(n));
}

WeightsReader::~WeightsReader() = default;
WeightsReader::WeightsReader(WeightsReader&&) noexcept = default;
WeightsReader& WeightsReader::operator=(WeightsReader&&) noexcept = default;

const std::map<std::string, std::string>& WeightsReader::metadata() const {
  return impl_->metadata;
}

std::size_t WeightsReader::size() const {
  return names_.size();
}
const std::string& WeightsReader::name(std::size_t i) const {
  return names_.at(i);
}
DType WeightsReader::dtype(std::size_t i) const {
  return impl_->entries[index_.at(i)].dtype;
}
const Shape& WeightsReader::shape(std::size_t i) const {
  return impl_->entries[index_.at(i)].shape;
}
void WeightsReader::read(std::size_t i, TensorData& out) {
  impl_->read(index_.at(i), out);
}

}  // namespace ember::store
