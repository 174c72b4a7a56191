# The WebAssembly build (preset `wasm`, scripts/build-wasm.sh; docs/architecture.md,
# "WebAssembly"): ember::core, the CPU backend on its own kernels (no OpenBLAS, oneDNN or
# OpenMP: src/cpu/blas.hpp and src/cpu/parallel.hpp fall back to Ember's GEMM and to one
# thread), the safetensors part of ember::store, ember::nn, and the binding src/web/ linked
# into build/wasm/web/ember-web.{js,wasm}. Compiled with WASM SIMD128.

# JavaScript-based exceptions: Debian ships libc++ prebuilt for them (not for -fwasm-exceptions).
set(EMBER_WASM_COMPILE -msimd128 -fexceptions)
# EMBER_WASM_THREADS (preset wasm-threads): the kernels' parallel loops run on Ember's thread
# team (src/cpu/team.cpp) over Web Workers. It needs SharedArrayBuffer, which browsers give only
# to cross-origin isolated pages (served with COOP/COEP headers); src/web/ember.js loads this
# build there and the single-threaded one elsewhere.
option(EMBER_WASM_THREADS "Threaded WebAssembly build (pthreads on Web Workers)" OFF)
if(EMBER_WASM_THREADS)
  list(APPEND EMBER_WASM_COMPILE -pthread)
  set(EMBER_WEB_NAME ember-web-threads)
  set(EMBER_WEB_EXPORT EmberWasmThreads)
  # The team's workers (cores - 1, at most 7; src/cpu/team.cpp computes the same) start with
  # the module: a thread started later would need the event loop, which a waiting caller never
  # returns to. Fixed memory: with shared memory, growth by a worker would leave ember.js's
  # views of it stale. ABORTING_MALLOC=0: a full heap makes malloc return null (bad_alloc, an
  # OutOfMemoryError in JavaScript) instead of aborting the module.
  set(EMBER_WEB_MEMORY_MIB 256)
  set(EMBER_WEB_LINK
      "-sPTHREAD_POOL_SIZE=Math.max(0,Math.min(8,_emscripten_num_logical_cores()||1)-1)"
      -sINITIAL_MEMORY=${EMBER_WEB_MEMORY_MIB}MB -sALLOW_MEMORY_GROWTH=0 -sABORTING_MALLOC=0)
else()
  set(EMBER_WEB_NAME ember-web)
  set(EMBER_WEB_EXPORT EmberWasm)
  set(EMBER_WEB_MEMORY_MIB 2048)  # emscripten's MAXIMUM_MEMORY with ALLOW_MEMORY_GROWTH
  set(EMBER_WEB_LINK -sALLOW_MEMORY_GROWTH=1)
endif()
add_compile_options(${EMBER_WASM_COMPILE})
add_library(ember_warnings INTERFACE)
target_compile_options(ember_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter
                                                -Wno-unknown-pragmas)

# nlohmann-json is header only: its Debian headers, without the rest of /usr/include.
set(EMBER_WASM_SYSINC ${CMAKE_BINARY_DIR}/sysinc)
find_path(EMBER_NLOHMANN_DIR nlohmann/json.hpp PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH REQUIRED)
file(MAKE_DIRECTORY ${EMBER_WASM_SYSINC})
file(CREATE_LINK ${EMBER_NLOHMANN_DIR}/nlohmann ${EMBER_WASM_SYSINC}/nlohmann SYMBOLIC)

file(GLOB EMBER_CORE_SOURCES CONFIGURE_DEPENDS src/core/*.cpp src/ir/*.cpp)
add_library(ember_core STATIC ${EMBER_CORE_SOURCES})
target_include_directories(ember_core PUBLIC include)
target_include_directories(ember_core SYSTEM PUBLIC ${EMBER_WASM_SYSINC})
target_compile_features(ember_core PUBLIC cxx_std_20)
target_link_libraries(ember_core PRIVATE ember_warnings)

# conv_dnnl.cpp compiles to its stand-ins without EMBER_HAVE_DNNL (im2col + GEMM).
file(GLOB EMBER_CPU_SOURCES CONFIGURE_DEPENDS src/cpu/*.cpp)
add_library(ember_cpu STATIC ${EMBER_CPU_SOURCES})
target_link_libraries(ember_cpu PUBLIC ember_core PRIVATE ember_warnings)
target_include_directories(ember_cpu PRIVATE src/cpu)

# Safetensors only: PyTorch files need libzip and libdeflate.
add_library(ember_store STATIC src/store/safetensors.cpp src/store/tensors.cpp
                               src/store/file.cpp src/store/atomic_file.cpp)
target_link_libraries(ember_store PUBLIC ember_core PRIVATE ember_warnings)

file(GLOB EMBER_NN_SOURCES CONFIGURE_DEPENDS src/module/*.cpp)
list(FILTER EMBER_NN_SOURCES EXCLUDE REGEX "io_store\\.cpp$")  # reads .pt files too
add_library(ember_nn STATIC ${EMBER_NN_SOURCES})
target_link_libraries(ember_nn PUBLIC ember_cpu ember_store PRIVATE ember_warnings)

# The JavaScript module: build/wasm/web/ember-web.js (+ .wasm); src/web/ember.js wraps it.
add_executable(ember_web src/web/classifier.cpp src/web/bindings.cpp)
target_link_libraries(ember_web PRIVATE ember_nn ember_warnings)
target_compile_definitions(ember_web PRIVATE EMBER_WEB_MEMORY_MIB=${EMBER_WEB_MEMORY_MIB})
set_target_properties(ember_web PROPERTIES OUTPUT_NAME ${EMBER_WEB_NAME} SUFFIX .js
                                           RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/web)
target_link_options(ember_web PRIVATE ${EMBER_WASM_COMPILE} ${EMBER_WEB_LINK} -sMODULARIZE=1
  -sEXPORT_NAME=${EMBER_WEB_EXPORT} -sFILESYSTEM=0 -sENVIRONMENT=web,worker,node
  -sEXPORTED_FUNCTIONS=@${CMAKE_SOURCE_DIR}/src/web/exports.txt
  -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8)
add_custom_command(TARGET ember_web POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/src/web/ember.js ${CMAKE_BINARY_DIR}/web/)
