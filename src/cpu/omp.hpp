// The OpenMP run-time calls the CPU kernels make (not installed): OpenMP's own when compiled
// with it (every native build), else stand-ins for the WebAssembly builds. `#pragma omp`
// lines are ignored there; the loops that matter go through parallel_tasks (team.hpp), which
// runs them on Ember's own thread team in the threaded WebAssembly build and on the calling
// thread in the single-threaded one.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#else
#ifdef __EMSCRIPTEN_PTHREADS__
namespace ember::cpu::team {
bool in_parallel();
}
inline int omp_in_parallel() {
  return ember::cpu::team::in_parallel() ? 1 : 0;
}
#else
inline int omp_in_parallel() {
  return 0;
}
#endif
inline int omp_get_max_threads() {
  return 1;
}
inline void omp_set_num_threads(int) {}
#endif
