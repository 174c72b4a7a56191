// The OpenMP run-time calls the CPU kernels make (not installed): OpenMP's own when compiled
// with it (every native build), else serial stand-ins (the WebAssembly build, single
// threaded: `#pragma omp` lines are then ignored and loops run on the calling thread).
#pragma once

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_in_parallel() {
  return 0;
}
inline int omp_get_max_threads() {
  return 1;
}
inline void omp_set_num_threads(int) {}
#endif
