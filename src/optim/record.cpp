// Optimizer records as safetensors files.
#include "ember/optim/record.hpp"

#include "ember/core/error.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::optim {

namespace {
constexpr const char* kMetaKey = "ember.optimizer";
}

void save_record(const OptimizerRecord& record, const std::filesystem::path& path) {
  store::NamedTensors named;
  named.tensors.reserve(record.tensors.size());
  for (const auto& [k, v] : record.tensors) named.tensors.emplace_back(k, v);
  named.metadata[kMetaKey] = record.meta.dump();
  store::write_safetensors(path, named);
}

OptimizerRecord load_record(const std::filesystem::path& path) {
  store::NamedTensors named = store::read_safetensors(path);
  const auto it = named.metadata.find(kMetaKey);
  if (it == named.metadata.end()) {
    ember::detail::fail<IoError>("load_record", "'", path.string(),
                                 "' is not an optimizer record (no '", kMetaKey, "' metadata)");
  }
  OptimizerRecord rec;
  try {
    rec.meta = nlohmann::json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    ember::detail::fail<IoError>("load_record", "'", path.string(),
                                 "': corrupt optimizer metadata: ", e.what());
  }
  for (auto& [k, v] : named.tensors) rec.tensors.insert_or_assign(k, std::move(v));
  return rec;
}

}  // namespace ember::optim
