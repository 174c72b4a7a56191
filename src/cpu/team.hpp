// Parallel loops of the CPU kernels (not installed): OpenMP in native builds, Ember's own
// thread team in the threaded WebAssembly build (pthreads on Web Workers, team.cpp), the
// calling thread in the single-threaded WebAssembly build.
#pragma once

#include <cstdint>
#include <type_traits>

#include "omp.hpp"

namespace ember::cpu {

/// How parallel_tasks hands out tasks: Static gives each thread one contiguous range of task
/// indices (OpenMP's schedule(static)); Dynamic one task at a time to whichever thread is free
/// (schedule(dynamic, 1): a descheduled thread does not hold up the others).
enum class Schedule { Static, Dynamic };

#ifdef __EMSCRIPTEN_PTHREADS__
namespace team {
/// Threads the team can run at once: the caller plus the workers (Web Workers) the module
/// started with (at most 8).
int capacity();
/// Runs call(ctx, i) for every i in [0, n) on `nt` threads (the caller among them); returns
/// when all have finished. Calls from inside a task run serially on that thread.
void run(int nt, std::int64_t n, Schedule schedule, void (*call)(void*, std::int64_t), void* ctx);
}  // namespace team
#endif

/// Runs f(i) for i in [0, n) on up to `nt` threads, serially when nt <= 1, n <= 1 or inside
/// another parallel region. f must not throw.
template <class F>
void parallel_tasks(std::int64_t n, int nt, Schedule schedule, F&& f) {
  if (n <= 0) return;
  if (nt > n) nt = static_cast<int>(n);
  if (nt <= 1 || omp_in_parallel()) {
    for (std::int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#if defined(_OPENMP)
  if (schedule == Schedule::Dynamic) {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  } else {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  }
#elif defined(__EMSCRIPTEN_PTHREADS__)
  using Fn = std::remove_reference_t<F>;
  team::run(
      nt, n, schedule, [](void* ctx, std::int64_t i) { (*static_cast<Fn*>(ctx))(i); },
      const_cast<void*>(static_cast<const void*>(&f)));
#else
  for (std::int64_t i = 0; i < n; ++i) f(i);
#endif
}

}  // namespace ember::cpu
