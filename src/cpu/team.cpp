// Ember's thread team for the threaded WebAssembly build (team.hpp): the caller plus up to 7
// workers, started once from the module's pre-started Web Workers (emscripten's
// PTHREAD_POOL_SIZE, set to the same count in cmake/EmberWasm.cmake: a thread beyond the pool
// would need the browser's event loop to start, which a waiting caller never returns to).
// Native builds use OpenMP instead; the single-threaded WebAssembly build neither.
#ifdef __EMSCRIPTEN_PTHREADS__

#include "team.hpp"

#include <emscripten/threading.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::cpu::team {

namespace {

thread_local bool t_in_parallel = false;

/// One parallel loop; lives on the caller's stack until every participant has finished.
struct Job {
  void (*call)(void*, std::int64_t);
  void* ctx;
  std::int64_t n;
  int nt;
  Schedule schedule;
  std::atomic<std::int64_t> next{0};
};

/// Thread `id` (0 = the caller) of `job.nt` runs its tasks.
void work(Job& job, int id) {
  if (job.schedule == Schedule::Static) {
    const std::int64_t b = job.n * id / job.nt, e = job.n * (id + 1) / job.nt;
    for (std::int64_t i = b; i < e; ++i) job.call(job.ctx, i);
  } else {
    for (std::int64_t i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < job.n;) {
      job.call(job.ctx, i);
    }
  }
}

class Pool {
 public:
  /// Never destroyed: the workers wait for jobs until the module goes away.
  static Pool& get() {
    static Pool* pool = new Pool();
    return *pool;
  }

  int capacity() const { return 1 + static_cast<int>(workers_.size()); }

  void run(Job& job) {
    std::lock_guard<std::mutex> one_at_a_time(run_mu_);
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = &job;
      job_nt_ = job.nt;
      pending_ = job.nt - 1;  // workers 1..nt-1 take part
      ++generation_;
    }
    wake_.notify_all();
    t_in_parallel = true;
    work(job, 0);
    t_in_parallel = false;
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  Pool() {
    const int cores = std::max(1, emscripten_num_logical_cores());
    const int count = std::min(cores, 8) - 1;
    for (int id = 1; id <= count; ++id) workers_.emplace_back([this, id] { loop(id); });
  }

  void loop(int id) {
    t_in_parallel = true;
    std::uint64_t seen = 0;
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lk(mu_);
        wake_.wait(lk, [&] { return generation_ != seen; });
        seen = generation_;
        if (id < job_nt_) job = job_;
      }
      if (!job) continue;
      work(*job, id);
      std::lock_guard<std::mutex> lk(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mu_, mu_;
  std::condition_variable wake_, done_;
  Job* job_ = nullptr;
  int job_nt_ = 0;
  int pending_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace

bool in_parallel() {
  return t_in_parallel;
}

int capacity() {
  return Pool::get().capacity();
}

void run(int nt, std::int64_t n, Schedule schedule, void (*call)(void*, std::int64_t), void* ctx) {
  Pool& pool = Pool::get();
  Job job{call, ctx, n, std::min(nt, pool.capacity()), schedule};
  if (job.nt <= 1) {
    for (std::int64_t i = 0; i < n; ++i) call(ctx, i);
    return;
  }
  pool.run(job);
}

}  // namespace ember::cpu::team

#endif  // __EMSCRIPTEN_PTHREADS__
