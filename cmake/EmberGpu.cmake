# ember::gpu: the GPU backends ember::Cuda and ember::Vulkan (Gpu<R> over the kernel runtimes;
# include/ember/gpu/, src/gpu/, docs/gpu.md). Included from the top-level CMakeLists.txt after
# cmake/EmberKernel.cmake: built when at least one GPU runtime is.
if(NOT TARGET ember_vulkan AND NOT TARGET ember_cuda)
  message(STATUS "ember: no GPU runtime; ember::gpu is not built")
  return()
endif()

add_library(ember_gpu src/gpu/core.cpp src/gpu/map.cpp src/gpu/reduce.cpp src/gpu/matmul.cpp
  src/gpu/conv.cpp src/gpu/conv_backward.cpp src/gpu/pool.cpp src/gpu/index.cpp src/gpu/create.cpp src/gpu/scan.cpp
  src/gpu/sort.cpp src/gpu/interpolate.cpp src/gpu/rows.cpp
  src/gpu/attention.cpp src/gpu/fused.cpp
  src/gpu/fallback.cpp)
add_library(ember::gpu ALIAS ember_gpu)
set_target_properties(ember_gpu PROPERTIES EXPORT_NAME gpu OUTPUT_NAME ember_gpu)
target_link_libraries(ember_gpu PUBLIC ember_kernel ember_cpu
  PRIVATE $<BUILD_INTERFACE:ember_warnings>)
set(EMBER_GPU_RUNTIMES "")
if(TARGET ember_vulkan)
  target_sources(ember_gpu PRIVATE src/gpu/runtime_vulkan.cpp)
  target_link_libraries(ember_gpu PUBLIC ember_vulkan)
  list(APPEND EMBER_GPU_RUNTIMES vulkan)
endif()
if(TARGET ember_cuda)
  target_sources(ember_gpu PRIVATE src/gpu/runtime_cuda.cpp)
  target_link_libraries(ember_gpu PUBLIC ember_cuda)
  list(APPEND EMBER_GPU_RUNTIMES cuda)
endif()
message(STATUS "ember: GPU backends for ${EMBER_GPU_RUNTIMES}")

# Autodiff<Vulkan>, Autodiff<Cuda>: compiled once each (ember_autodiff_instances,
# CMakeLists.txt). Dispatch's devices vulkan:N and cuda:N (each plain, +autodiff and
# +checkpointing; src/dispatch/stacks.hpp) run them under Fusion (below).
set(EMBER_GPU_INSTALL ember_gpu)
if(TARGET ember_vulkan)
  ember_autodiff_instances(ember_autodiff_vulkan ember/autodiff/vulkan.hpp ::ember::Vulkan Vulkan)
  add_library(ember::autodiff_vulkan ALIAS ember_autodiff_vulkan)
  set_target_properties(ember_autodiff_vulkan PROPERTIES EXPORT_NAME autodiff_vulkan)
  target_link_libraries(ember_autodiff_vulkan PUBLIC ember_gpu)
  target_link_libraries(ember_dispatch PUBLIC ember_autodiff_vulkan)
  target_compile_definitions(ember_dispatch PUBLIC EMBER_DISPATCH_VULKAN=1)
  list(APPEND EMBER_GPU_INSTALL ember_autodiff_vulkan)
endif()
if(TARGET ember_cuda)
  ember_autodiff_instances(ember_autodiff_cuda ember/autodiff/cuda.hpp ::ember::Cuda Cuda)
  add_library(ember::autodiff_cuda ALIAS ember_autodiff_cuda)
  set_target_properties(ember_autodiff_cuda PROPERTIES EXPORT_NAME autodiff_cuda)
  target_link_libraries(ember_autodiff_cuda PUBLIC ember_gpu)
  target_link_libraries(ember_dispatch PUBLIC ember_autodiff_cuda)
  target_compile_definitions(ember_dispatch PUBLIC EMBER_DISPATCH_CUDA=1)
  list(APPEND EMBER_GPU_INSTALL ember_autodiff_cuda)
endif()
# Fusion<Vulkan>, Fusion<Cuda> (header templates; blocks run through gpu::fused_elementwise,
# src/gpu/fused.cpp) under Autodiff: compiled once each, so backward chains fuse too.
foreach(runtime vulkan cuda)
  if(TARGET ember_${runtime})
    string(SUBSTRING ${runtime} 0 1 first)
    string(TOUPPER ${first} first)
    string(SUBSTRING ${runtime} 1 -1 rest)
    set(t ember_autodiff_fusion_${runtime})
    ember_autodiff_instances(${t} ember/autodiff/fusion_${runtime}.hpp
      "::ember::Fusion<::ember::${first}${rest}>" Fusion${first}${rest})
    add_library(ember::autodiff_fusion_${runtime} ALIAS ${t})
    set_target_properties(${t} PROPERTIES EXPORT_NAME autodiff_fusion_${runtime})
    target_link_libraries(${t} PUBLIC ember_gpu ember_fusion)
    # Dispatch's cuda:N and vulkan:N devices run Fusion<B> (src/dispatch/stacks.hpp).
    target_link_libraries(ember_dispatch PUBLIC ${t})
    list(APPEND EMBER_GPU_INSTALL ${t})
  endif()
endforeach()
install(TARGETS ${EMBER_GPU_INSTALL} EXPORT emberTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(EMBER_BUILD_TESTS)
  add_subdirectory(tests/gpu)
endif()

if(EMBER_BUILD_BENCHMARKS)
  # Backend functions on the GPUs beside PyTorch (benchmarks/gpu/ops_side_by_side.py).
  add_executable(bench_ops_gpu benchmarks/gpu/bench_ops_gpu.cpp)
  target_link_libraries(bench_ops_gpu PRIVATE ember_gpu ember_warnings)
  # Fusion on the GPUs beside PyTorch eager and torch.compile (fusion_side_by_side.py).
  add_executable(bench_fusion_gpu benchmarks/gpu/bench_fusion_gpu.cpp)
  target_link_libraries(bench_fusion_gpu PRIVATE ember_gpu ember_optim ember_warnings)
  foreach(runtime vulkan cuda)
    if(TARGET ember_autodiff_fusion_${runtime})
      target_link_libraries(bench_fusion_gpu PRIVATE ember_autodiff_${runtime}
        ember_autodiff_fusion_${runtime})
    endif()
  endforeach()
endif()
