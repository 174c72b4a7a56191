// Modules (Burn's #[derive(Module)] in C++): a plain struct plus one EMBER_MODULE line.
//
//   template <Backend B = Dispatch>
//   struct Mlp {
//     nn::Linear<B> fc1, fc2;
//     nn::Dropout dropout;
//     std::int64_t hidden = 0;                 // a setting: copied, not visited
//     EMBER_MODULE(fc1, fc2, dropout, hidden)
//     Tensor<B, 2> forward(const Tensor<B, 2>& x) const { ... }
//   };
//
// EMBER_MODULE lists EVERY field: Params, Buffers, sub-modules, std::vector / std::array /
// std::optional of those, and plain settings (numbers, enums, configs). It gives:
//   - visiting with dotted paths ("encoder.layers.0.self_attn.out_proj.weight", the names of
//     PyTorch's state_dict), free functions nn::visit / nn::visit_mut / nn::visit_modules;
//   - member functions num_params(), valid(), to_device(d), fork(d), no_grad(),
//     deep_copy(), freeze(pattern), unfreeze(pattern), train(on), eval(), is_training(),
//     state_dict(),
//     load_state_dict(tensors, options), save(path, metadata), load(path, options).
// A field that EMBER_MODULE does not list is ignored by everything (not moved, saved or
// trained) and default-initialised by valid() across backends (Autodiff<Cpu> -> Cpu).
// EMBER_MODULE needs namespace or class scope (not a struct local to a function).
//
// Copying a module copies its settings and tensor handles: tensors are immutable values, so a
// copy shares nothing mutable (an optimizer step on one replaces that copy's tensors only).
// Params keep their ids in copies (Burn's clone); deep_copy() gives new ids.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/module/macros.hpp"
#include "ember/module/param.hpp"
#include "ember/store/tensors.hpp"
#include "ember/store/weights.hpp"

namespace ember::nn {

/// Options of load_state_dict / Module::load (PyTorch's load_state_dict semantics).
struct LoadOptions {
  /// true: a key of the module missing from the tensors is an error (partial loading off).
  bool strict = true;
  /// true: a key of the tensors that the module does not have is an error.
  bool error_on_unexpected = true;
  /// Regex rewrites of the file's keys before matching, applied in order
  /// ({"^model\\.", ""} strips a prefix) (file loading only).
  std::vector<std::pair<std::string, std::string>> remap{};
  /// Part of the file to load, keys relative to it: a sub-dict of a PyTorch checkpoint
  /// ("model", "state_dict"), or the tensors named "<select>.*" of a safetensors file;
  /// empty = everything (file loading only).
  std::string select{};
};

/// What load_state_dict did: module keys loaded, module keys without a tensor (only when not
/// strict), file keys the module does not have (only when unexpected keys are allowed).
struct LoadReport {
  std::vector<std::string> loaded, missing, unexpected;
};

/// A state dict did not fit the module. `what()` lists every problem; the module is unchanged.
class LoadError : public Error {
 public:
  LoadError(std::string message, std::vector<std::string> missing,
            std::vector<std::string> unexpected, std::vector<std::string> mismatched)
      : Error(std::move(message)),
        missing(std::move(missing)),
        unexpected(std::move(unexpected)),
        mismatched(std::move(mismatched)) {}
  /// Keys of the module with no tensor, keys of the tensors the module lacks, and
  /// "key: reason" for shape / dtype problems.
  std::vector<std::string> missing, unexpected, mismatched;
};

/// A named list of host tensors in module order (state_dict's result).
using StateDict = std::vector<std::pair<std::string, TensorData>>;

namespace detail {

template <class M>
concept ModuleType = requires {
  typename M::ember_module_tag;
};

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsArray : std::false_type {};
template <class T, std::size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <class T>
inline constexpr bool is_leaf_v = is_param_v<T> || is_buffer_v<T>;

inline std::string join_path(const std::string& prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  std::string out;
  out.reserve(prefix.size() + 1 + name.size());
  out.append(prefix).append(1, '.').append(name);
  return out;
}

/// Calls f(path, leaf) for every Param/Buffer with a value under `x`, and
/// f.module(path, m) for every module when F has such a member (root first).
template <class X, class F>
void walk(const std::string& path, X& x, F& f) {
  using T = std::remove_cv_t<X>;
  if constexpr (is_leaf_v<T>) {
    if (x.has_value()) f(path, x);
  } else if constexpr (ModuleType<T>) {
    if constexpr (requires { f.module(path, x); }) f.module(path, x);
    T::ember_fields(x,
                    [&](const char* name, auto& field) { walk(join_path(path, name), field, f); });
  } else if constexpr (IsVector<T>::value || IsArray<T>::value) {
    for (std::size_t i = 0; i < x.size(); ++i) walk(join_path(path, std::to_string(i)), x[i], f);
  } else if constexpr (IsOptional<T>::value) {
    if (x) walk(path, *x, f);
  }
}

/// Walks `src` and `dst` (the same module on another backend) together: leaves call
/// f(path, src_leaf, dst_leaf); containers are resized; settings are copied.
template <class X, class Y, class F>
void zip(const std::string& path, const X& src, Y& dst, F& f) {
  if constexpr (is_leaf_v<X>) {
    if (src.has_value()) f(path, src, dst);
  } else if constexpr (ModuleType<X>) {
    X::ember_fields2(src, dst, [&](const char* name, const auto& a, auto& b) {
      zip(join_path(path, name), a, b, f);
    });
  } else if constexpr (IsVector<X>::value) {
    dst.clear();
    dst.resize(src.size());
    for (std::size_t i = 0; i < src.size(); ++i)
      zip(join_path(path, std::to_string(i)), src[i], dst[i], f);
  } else if constexpr (IsArray<X>::value) {
    for (std::size_t i = 0; i < src.size(); ++i)
      zip(join_path(path, std::to_string(i)), src[i], dst[i], f);
  } else if constexpr (IsOptional<X>::value) {
    if (src) {
      dst.emplace();
      zip(path, *src, *dst, f);
    } else {
      dst.reset();
    }
  } else {
    dst = src;
  }
}

/// The same module template on backend B2 (Linear<Autodiff<Cpu>> -> Linear<Cpu>); a module
/// that is not a template over its backend maps to itself.
template <class M, class B2>
struct Rebind {
  using type = M;
};
template <template <class> class T, class B, class B2>
requires Backend<B>
struct Rebind<T<B>, B2> {
  using type = T<B2>;
};
template <template <class, std::size_t> class T, class B, std::size_t N, class B2>
requires Backend<B>
struct Rebind<T<B, N>, B2> {
  using type = T<B2, N>;
};

/// Inner backend of a tensor's backend (itself on plain backends).
template <class B>
struct InnerOf {
  using type = B;
};
template <class B>
requires AutodiffBackend<B>
struct InnerOf<B> {
  using type = typename B::InnerBackend;
};

/// Backend of the module template M (void for a module that is not a template over it).
template <class M>
struct BackendOf {
  using type = void;
};
template <template <class> class T, class B>
requires Backend<B>
struct BackendOf<T<B>> {
  using type = B;
};
template <template <class, std::size_t> class T, class B, std::size_t N>
requires Backend<B>
struct BackendOf<T<B, N>> {
  using type = B;
};

/// Glob match: '*' matches any run of characters (dots included), '?' one character.
bool glob_match(std::string_view pattern, std::string_view text);

/// Writes `tensors` as safetensors at `path` atomically (ember::store).
void save_state(const StateDict& tensors, const std::filesystem::path& path,
                const std::map<std::string, std::string>& metadata);
/// Reads a safetensors or PyTorch .pt/.pth file as named tensors (ember::store), applying
/// options.select and options.remap.
std::map<std::string, TensorData> read_state(const std::filesystem::path& path,
                                             const LoadOptions& options);
/// The LoadError for the problems found (message lists all of them).
[[noreturn]] void throw_load_error(std::vector<std::string> missing,
                                   std::vector<std::string> unexpected,
                                   std::vector<std::string> mismatched);

/// Adapter of visit_modules: ignores leaves, forwards modules.
template <class F>
struct ModuleVisitor {
  F& f;
  template <class L>
  void operator()(const std::string&, const L&) const {}
  template <class Mod>
  void module(const std::string& path, Mod& mod) const {
    f(path, mod);
  }
};

template <class T>
TensorData leaf_data(const T& leaf) {
  TensorData d = leaf.val().into_data();
  if constexpr (is_buffer_v<T>) {
    if (leaf.scalar() && d.numel() == 1) {
      const DType dt = d.dtype();
      return TensorData::from_bytes(std::move(d).into_bytes(), Shape{}, dt);
    }
  }
  return d;
}

}  // namespace detail

// ---- visiting -------------------------------------------------------------------------

/// Calls f(path, leaf) for every Param and Buffer (with a value) of `m`, in declaration
/// order; `leaf` is a const Param<...>& or Buffer<...>& (test with is_param_v/is_buffer_v on
/// std::remove_cvref_t<decltype(leaf)>).
template <class M, class F>
void visit(const M& m, F&& f) {
  detail::walk(std::string(), m, f);
}
/// visit() with mutable leaves (f may call leaf.set(...)).
template <class M, class F>
void visit_mut(M& m, F&& f) {
  detail::walk(std::string(), m, f);
}
/// Calls f(path, module) for `m` (path "") and every sub-module, parents first.
template <class M, class F>
void visit_modules(M& m, F&& f) {
  detail::ModuleVisitor<std::remove_reference_t<F>> v{f};
  detail::walk(std::string(), m, v);
}

/// Number of scalar parameters (Params only, frozen included; PyTorch's
/// sum(p.numel() for p in parameters())).
template <class M>
std::int64_t num_params(const M& m) {
  std::int64_t n = 0;
  visit(m, [&](const std::string&, const auto& leaf) {
    if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) n += leaf.val().numel();
  });
  return n;
}

// ---- mode -------------------------------------------------------------------------------

/// Sets the `bool training` member of every sub-module that has one (Dropout, BatchNorm,
/// ...): PyTorch's module.train(on).
template <class M>
void set_training(M& m, bool on) {
  visit_modules(m, [&](const std::string&, auto& mod) {
    if constexpr (requires { mod.training = on; }) {
      if constexpr (!std::is_const_v<std::remove_reference_t<decltype(mod)>>) mod.training = on;
    }
  });
}
/// True unless some sub-module with a `training` member is in eval mode.
template <class M>
bool is_training(const M& m) {
  bool on = true;
  visit_modules(m, [&](const std::string&, const auto& mod) {
    if constexpr (requires { bool(mod.training); }) on = on && mod.training;
  });
  return on;
}

// ---- copies on other devices / backends ----------------------------------------------

/// The same model without autodiff, for evaluation (Burn's AutodiffModule::valid): on
/// B::InnerBackend (Dispatch: the device without "+autodiff"), untracked, in eval mode.
/// Params keep their ids. On a plain backend: a copy in eval mode.
template <class M>
auto valid(const M& m) {
  using B = typename detail::BackendOf<M>::type;
  if constexpr (std::is_void_v<B> || !AutodiffBackend<B>) {
    M out = m;
    visit_mut(out, [](const std::string&, auto& leaf) {
      using L = std::remove_cvref_t<decltype(leaf)>;
      if constexpr (is_param_v<L>) {
        using TB = typename detail::TensorTraits<typename L::Value>::Backend;
        if constexpr (AutodiffBackend<TB>) {
          static_assert(std::is_same_v<typename TB::InnerBackend, TB>,
                        "valid(): a module on an autodiff backend must be a template over its "
                        "backend (template <Backend B> struct M) so that it can be rebuilt on "
                        "the inner backend");
          leaf = L(leaf.id(), leaf.val().inner(), leaf.require_grad());
        }
      } else if constexpr (is_buffer_v<L>) {
        using TB = typename detail::TensorTraits<typename L::Value>::Backend;
        if constexpr (AutodiffBackend<TB>) leaf.set(leaf.val().inner());
      }
    });
    set_training(out, false);
    return out;
  } else {
    using Inner = typename B::InnerBackend;
    using Out = typename detail::Rebind<M, Inner>::type;
    // Same type (Dispatch): start from a copy, so fields EMBER_MODULE does not list keep
    // their values; across backends they are default-initialised.
    Out out = [&]() -> Out {
      if constexpr (std::is_same_v<Out, M>)
        return m;
      else
        return Out{};
    }();
    auto f = [](const std::string&, const auto& src, auto& dst) {
      using L = std::remove_cvref_t<decltype(src)>;
      using DL = std::remove_cvref_t<decltype(dst)>;
      if constexpr (is_param_v<L>) {
        dst = DL(src.id(), src.val().inner(), src.require_grad());
      } else {
        dst = DL(src.val().inner(), src.scalar());
      }
    };
    detail::zip(std::string(), m, out, f);
    set_training(out, false);
    return out;
  }
}

/// A copy of the module with every tensor on `device` (same backend, same ids). Params that
/// require grad become fresh leaves there when the device records gradients (Dispatch:
/// to_device(Device::cpu().autodiff()) makes a model trainable).
template <class M, class Dev>
M to_device(const M& m, const Dev& device) {
  M out = m;
  visit_mut(out, [&](const std::string&, auto& leaf) { leaf.set(leaf.val().to_device(device)); });
  return out;
}
/// to_device() for a model that is trained on another device or thread (Burn's fork): every
/// Param is a fresh leaf, so no graph is shared with the original.
template <class M, class Dev>
M fork(const M& m, const Dev& device) {
  return to_device(m, device);
}

/// A copy whose Params have new ids: an independent set of parameters for optimizers
/// (PyTorch's copy.deepcopy). A plain copy (`M b = a;`) keeps the ids, as Burn's clone: use
/// deep_copy to build several layers from one (`std::vector<Linear<>>(3, layer)` would give
/// three layers sharing ids, which optimizers reject).
template <class M>
M deep_copy(const M& m) {
  M out = m;
  visit_mut(out, [](const std::string&, auto& leaf) {
    if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) leaf.renew_id();
  });
  return out;
}

/// Throws ValueError naming both paths when two Params of `m` share a ParamId (copies of one
/// layer; see deep_copy). Optimizers call it: shared ids would mix their state.
template <class M>
void check_unique_ids(const M& m, std::string_view op) {
  std::map<ParamId, std::string> seen;
  visit(m, [&](const std::string& path, const auto& leaf) {
    if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) {
      auto [it, fresh] = seen.emplace(leaf.id(), path);
      if (!fresh) {
        ember::detail::fail<ValueError>(
            op, "parameters '", it->second, "' and '", path,
            "' share one ParamId: a copy of a module keeps its parameters' ids; build each "
            "layer with its config's init(), or copy it with nn::deep_copy() for new ids");
      }
    }
  });
}

/// A copy with every Param frozen (require_grad false): gradients are not computed for them
/// and optimizers skip them.
template <class M>
M no_grad(const M& m) {
  M out = m;
  visit_mut(out, [](const std::string&, auto& leaf) {
    if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) leaf.set_require_grad(false);
  });
  return out;
}
/// A copy with the Params whose path matches `pattern` frozen (glob: '*' any characters,
/// '?' one; "encoder.*", "*.bias"). Throws ValueError when nothing matches.
template <class M>
M freeze(const M& m, std::string_view pattern, bool frozen = true) {
  M out = m;
  int n = 0;
  visit_mut(out, [&](const std::string& path, auto& leaf) {
    if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) {
      if (detail::glob_match(pattern, path)) {
        leaf.set_require_grad(!frozen);
        ++n;
      }
    }
  });
  if (n == 0) {
    ember::detail::fail<ValueError>(frozen ? "freeze" : "unfreeze", "pattern '", pattern,
                                    "' matches no parameter");
  }
  return out;
}
/// freeze(m, pattern, false): the matching Params require grad again.
template <class M>
M unfreeze(const M& m, std::string_view pattern) {
  return freeze(m, pattern, false);
}

// ---- state dict -----------------------------------------------------------------------

/// Params and Buffers as host tensors with their paths, in declaration order (PyTorch's
/// state_dict; scalar Buffers get shape []).
template <class M>
StateDict state_dict(const M& m) {
  StateDict out;
  visit(m, [&](const std::string& path, const auto& leaf) {
    out.emplace_back(path, detail::leaf_data(leaf));
  });
  return out;
}

namespace detail {

/// The core of load_state_dict and load over any source of named tensors: `src` has size(),
/// name(i), shape(i), dtype(i) and data(i) -> const TensorData& (the values of tensor i;
/// only valid until the next call). Every key, shape and dtype is checked before any data
/// is read; on a problem it throws LoadError listing all of them and the module is
/// unchanged. Then, with `stream` false, every value is made before any leaf is set (all or
/// nothing); with `stream` true each leaf is set as soon as its value is made, so the
/// buffer of the value it replaces is free for the next one (a load needs the memory of
/// one tensor more than the model, not of a second model; only an error in the data itself
/// can then leave the module partly loaded).
template <class M, class Src>
LoadReport load_from(M& m, Src& src, const LoadOptions& options, bool stream) {
  LoadReport report;
  std::vector<std::string> mismatched;
  std::map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < src.size(); ++i) index.emplace(src.name(i), i);
  std::vector<bool> used(src.size(), false);
  std::vector<std::optional<std::size_t>> plan;  // per leaf in visit order: the source index
  visit_mut(m, [&](const std::string& path, auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    using T = typename L::Value;
    using K = typename TensorTraits<T>::Kind;
    plan.emplace_back();
    auto it = index.find(path);
    if (it == index.end()) {
      report.missing.push_back(path);
      return;
    }
    const std::size_t i = it->second;
    used[i] = true;
    const T& cur = leaf.val();
    const Shape want = cur.shape();
    bool shape_ok = src.shape(i) == want;
    if constexpr (is_buffer_v<L>) {
      if (leaf.scalar() && src.shape(i).rank() == 0 && want.numel() == 1) shape_ok = true;
    }
    if (!shape_ok) {
      std::ostringstream os;
      os << path << ": shape " << src.shape(i) << " in the file, " << want << " in the model";
      mismatched.push_back(os.str());
      return;
    }
    const DType dt = src.dtype(i);
    const bool kind_ok = std::is_same_v<K, Float> ? is_float(dt)
                         : std::is_same_v<K, Int> ? is_int(dt)
                                                  : is_bool(dt);
    if (!kind_ok) {
      std::ostringstream os;
      os << path << ": dtype " << dt << " in the file, " << cur.dtype() << " in the model";
      mismatched.push_back(os.str());
      return;
    }
    plan.back() = i;
    report.loaded.push_back(path);
  });
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (!used[i]) report.unexpected.push_back(src.name(i));
  }
  std::sort(report.unexpected.begin(), report.unexpected.end());
  const bool bad_missing = options.strict && !report.missing.empty();
  const bool bad_unexpected = options.error_on_unexpected && !report.unexpected.empty();
  if (bad_missing || bad_unexpected || !mismatched.empty()) {
    throw_load_error(bad_missing ? report.missing : std::vector<std::string>{},
                     bad_unexpected ? report.unexpected : std::vector<std::string>{},
                     std::move(mismatched));
  }
  std::vector<std::function<void()>> commits;
  std::size_t k = 0;
  visit_mut(m, [&](const std::string&, auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    using T = typename L::Value;
    const std::optional<std::size_t> i = plan[k++];
    if (!i) return;
    const TensorData& data = src.data(*i);
    const T& cur = leaf.val();
    const Shape want = cur.shape();
    // The file's bytes go to the device once: no host copy when the shapes match.
    T value = data.shape() == want
                  ? T::from_data(data, cur.device(), cur.dtype())
                  : T::from_data(TensorData::from_bytes(data.bytes(), want, data.dtype()),
                                 cur.device(), cur.dtype());
    if (stream) {
      leaf.set(std::move(value));
    } else {
      commits.push_back([&leaf, v = std::move(value)]() mutable { leaf.set(std::move(v)); });
    }
  });
  for (auto& c : commits) c();
  return report;
}

/// Named tensors in memory as a source of load_from.
struct MapSource {
  std::vector<const std::pair<const std::string, TensorData>*> items;
  explicit MapSource(const std::map<std::string, TensorData>& m) {
    for (const auto& kv : m) items.push_back(&kv);
  }
  std::size_t size() const { return items.size(); }
  const std::string& name(std::size_t i) const { return items[i]->first; }
  const Shape& shape(std::size_t i) const { return items[i]->second.shape(); }
  DType dtype(std::size_t i) const { return items[i]->second.dtype(); }
  const TensorData& data(std::size_t i) const { return items[i]->second; }
};

/// A weights file read tensor by tensor into one reused buffer, as a source of load_from.
struct FileSource {
  store::WeightsReader& file;
  TensorData buffer{};
  std::size_t size() const { return file.size(); }
  const std::string& name(std::size_t i) const { return file.name(i); }
  const Shape& shape(std::size_t i) const { return file.shape(i); }
  DType dtype(std::size_t i) const { return file.dtype(i); }
  const TensorData& data(std::size_t i) {
    file.read(i, buffer);
    return buffer;
  }
};

}  // namespace detail

/// Loads `tensors` into the module's Params and Buffers by path (PyTorch's
/// load_state_dict). Each tensor must have the leaf's shape (a scalar Buffer also takes
/// shape []) and a dtype of the same kind (converted to the leaf's dtype: f64 data loads
/// into an f32 Param). Missing and unexpected keys are errors unless options allow them.
/// Everything is checked before anything is changed: on any problem it throws LoadError
/// listing every missing / unexpected / mismatched key, and the module is unchanged.
template <class M>
LoadReport load_state_dict(M& m, const std::map<std::string, TensorData>& tensors,
                           const LoadOptions& options = {}) {
  detail::MapSource src(tensors);
  return detail::load_from(m, src, options, false);
}
/// load_state_dict from a StateDict (vector form). Throws ValueError on duplicate keys.
template <class M>
LoadReport load_state_dict(M& m, const StateDict& tensors, const LoadOptions& options = {}) {
  std::map<std::string, TensorData> map;
  for (const auto& [k, v] : tensors) {
    if (!map.emplace(k, v).second)
      ember::detail::fail<ValueError>("load_state_dict", "duplicate key '", k, "'");
  }
  return load_state_dict(m, map, options);
}

/// load_state_dict from what the weights readers return (store::read_weights,
/// read_safetensors, read_pytorch): the tensors by name, the metadata ignored. Throws
/// ValueError on duplicate keys.
///   auto file = store::read_weights("model.pt", {.select = "model"});
///   nn::load_state_dict(model, file);          // or model.load_state_dict(file)
template <class M>
LoadReport load_state_dict(M& m, const store::NamedTensors& file, const LoadOptions& options = {}) {
  return load_state_dict(m, file.tensors, options);
}

/// Saves the Params and Buffers as safetensors at `path` (atomic: a temp file renamed into
/// place), PyTorch's key names and layouts; `metadata` goes to the header's __metadata__
/// (the config as JSON under "config"). Throws IoError; ValueError for a .pt/.pth/.bin path.
template <class M>
void save(const M& m, const std::filesystem::path& path,
          const std::map<std::string, std::string>& metadata = {}) {
  detail::save_state(state_dict(m), path, metadata);
}
/// Loads a safetensors or PyTorch .pt/.pth file into the module (load_state_dict rules;
/// options.select / options.remap choose and rewrite the file's keys). Throws IoError for
/// unreadable or corrupt files and LoadError when the tensors do not fit; the module is then
/// unchanged. The file is streamed (store::WeightsReader): keys, shapes, dtypes and the
/// file's structure are all checked first, then each tensor is read (a safetensors file
/// through mmap) and set in turn, so the load needs memory for one tensor beyond the model
/// and reuses the buffers of the values it replaces. A PyTorch file's storages pass their CRC
/// check before the first is set; only a disk error mid-load can leave the module partial.
template <class M>
LoadReport load(M& m, const std::filesystem::path& path, const LoadOptions& options = {}) {
  store::WeightsReader file(path,
                            store::ReadOptions{.select = options.select, .remap = options.remap});
  detail::FileSource src{file};
  return detail::load_from(m, src, options, true);
}

}  // namespace ember::nn

#define EMBER_MODULE_FIELD1_(name) f_(#name, self_.name);
#define EMBER_MODULE_FIELD2_(name) f_(#name, a_.name, b_.name);

/// Declares a module's fields (every field: see ember/module/module.hpp) and gives it the
/// module member functions.
#define EMBER_MODULE(...)                                                                       \
  using ember_module_tag = void;                                                                \
  template <class Self_, class F_>                                                              \
  static void ember_fields([[maybe_unused]] Self_& self_, [[maybe_unused]] F_&& f_) {           \
    EMBER_PP_FOR_EACH(EMBER_MODULE_FIELD1_, __VA_ARGS__)                                        \
  }                                                                                             \
  template <class A_, class B_, class F_>                                                       \
  static void ember_fields2([[maybe_unused]] const A_& a_, [[maybe_unused]] B_& b_,             \
                            [[maybe_unused]] F_&& f_){                                          \
      EMBER_PP_FOR_EACH(EMBER_MODULE_FIELD2_, __VA_ARGS__)} /** Number of scalar parameters. */ \
  std::int64_t                                                                                  \
  num_params() const {                                                                          \
    return ::ember::nn::num_params(*this);                                                      \
  }                                                                                             \
  /** The model on the inner backend, untracked, in eval mode (nn::valid). */                   \
  auto valid() const {                                                                          \
    return ::ember::nn::valid(*this);                                                           \
  }                                                                                             \
  /** A copy on `device` (nn::to_device). */                                                    \
  template <class Dev_>                                                                         \
  auto to_device(const Dev_& device) const {                                                    \
    return ::ember::nn::to_device(*this, device);                                               \
  }                                                                                             \
  /** A copy on `device` with fresh leaves (nn::fork). */                                       \
  template <class Dev_>                                                                         \
  auto fork(const Dev_& device) const {                                                         \
    return ::ember::nn::fork(*this, device);                                                    \
  }                                                                                             \
  /** A copy whose Params have new ids (nn::deep_copy; PyTorch's deepcopy). */                  \
  auto deep_copy() const {                                                                      \
    return ::ember::nn::deep_copy(*this);                                                       \
  }                                                                                             \
  /** A copy with every Param frozen (nn::no_grad). */                                          \
  auto no_grad() const {                                                                        \
    return ::ember::nn::no_grad(*this);                                                         \
  }                                                                                             \
  /** A copy with the Params matching the glob `pattern` frozen (nn::freeze). */                \
  auto freeze(std::string_view pattern) const {                                                 \
    return ::ember::nn::freeze(*this, pattern);                                                 \
  }                                                                                             \
  auto unfreeze(std::string_view pattern) const {                                               \
    return ::ember::nn::unfreeze(*this, pattern);                                               \
  }                                                                                             \
  /** Training (true) or eval (false) mode for every sub-module (nn::set_training). */          \
  auto& train(bool on = true) {                                                                 \
    ::ember::nn::set_training(*this, on);                                                       \
    return *this;                                                                               \
  }                                                                                             \
  auto& eval() {                                                                                \
    return train(false);                                                                        \
  }                                                                                             \
  bool is_training() const {                                                                    \
    return ::ember::nn::is_training(*this);                                                     \
  }                                                                                             \
  /** Params and Buffers as host tensors by path (nn::state_dict). */                           \
  ::ember::nn::StateDict state_dict() const {                                                   \
    return ::ember::nn::state_dict(*this);                                                      \
  }                                                                                             \
  template <class Tensors_>                                                                     \
  ::ember::nn::LoadReport load_state_dict(const Tensors_& tensors,                              \
                                          const ::ember::nn::LoadOptions& options = {}) {       \
    return ::ember::nn::load_state_dict(*this, tensors, options);                               \
  }                                                                                             \
  /** Saves as safetensors, atomically (nn::save). */                                           \
  void save(const std::filesystem::path& path,                                                  \
            const std::map<std::string, std::string>& metadata = {}) const {                    \
    ::ember::nn::save(*this, path, metadata);                                                   \
  }                                                                                             \
  /** Loads safetensors / .pt / .pth (nn::load); unchanged on error. */                         \
  ::ember::nn::LoadReport load(const std::filesystem::path& path,                               \
                               const ::ember::nn::LoadOptions& options = {}) {                  \
    return ::ember::nn::load(*this, path, options);                                             \
  }
