// GLSL -> SPIR-V with shaderc.
#include <shaderc/shaderc.h>

#include <memory>

#include "ember/kernel/core.hpp"
#include "ember/vulkan/vulkan.hpp"

namespace ember::vulkan {

std::vector<std::uint32_t> compile_spirv(const std::string& glsl, const std::string& name) {
  static const auto deleter = [](shaderc_compiler_t c) { shaderc_compiler_release(c); };
  thread_local std::unique_ptr<shaderc_compiler, decltype(deleter)> compiler(
      shaderc_compiler_initialize(), deleter);
  if (!compiler) ember::detail::fail<DeviceError>("compile " + name, "shaderc failed to start");
  std::unique_ptr<shaderc_compile_options, void (*)(shaderc_compile_options_t)> opts(
      shaderc_compile_options_initialize(), shaderc_compile_options_release);
  shaderc_compile_options_set_target_env(opts.get(), shaderc_target_env_vulkan,
                                         shaderc_env_version_vulkan_1_2);
  shaderc_compile_options_set_source_language(opts.get(), shaderc_source_language_glsl);
  std::unique_ptr<shaderc_compilation_result, void (*)(shaderc_compilation_result_t)> r(
      shaderc_compile_into_spv(compiler.get(), glsl.data(), glsl.size(), shaderc_compute_shader,
                               (name + ".comp").c_str(), "main", opts.get()),
      shaderc_result_release);
  if (!r || shaderc_result_get_compilation_status(r.get()) != shaderc_compilation_status_success)
    ember::detail::fail<DeviceError>("compile " + name, "shaderc failed:\n",
                                     r ? shaderc_result_get_error_message(r.get()) : "",
                                     "\n---- source\n", glsl);
  const auto* words = reinterpret_cast<const std::uint32_t*>(shaderc_result_get_bytes(r.get()));
  return std::vector<std::uint32_t>(words, words + shaderc_result_get_length(r.get()) / 4);
}

}  // namespace ember::vulkan
