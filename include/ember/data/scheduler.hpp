// The untyped engine under DataLoader: a pool of worker threads that builds the batches of
// one epoch in parallel, hands them to the consumer in order, keeps at most `prefetch`
// batches in flight (being built or ready), and carries worker exceptions to the consumer.
// Users work with DataLoader (loader.hpp); this header is public only because the loader
// template uses it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::data::detail {

/// Builds batches 0..num_batches-1 with `build(k)` on `num_workers` threads (or in the
/// consumer's thread when num_workers is 0). `build(k)` stores its result in the caller's
/// slot k % prefetch(); the scheduler guarantees that the consumer reads that slot only after
/// `wait(k)` returned, and that no other batch uses the slot before `release(k)`.
class BatchScheduler {
 public:
  using Build = std::function<void(std::size_t batch)>;

  /// Starts the workers. prefetch is raised to 1 when 0. Threads are started here and joined
  /// by the destructor.
  BatchScheduler(std::size_t num_batches, std::size_t num_workers, std::size_t prefetch,
                 Build build);
  /// Stops the workers: those building a batch finish it, none starts another; then joins.
  ~BatchScheduler();

  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  /// Blocks until batch k (the next one the consumer has not released) is built. Rethrows
  /// the exception its build threw. With no workers, builds it in the calling thread.
  void wait(std::size_t k);

  /// The consumer has taken batch k out of its slot: the slot is free for batch k + prefetch.
  void release(std::size_t k);

  /// The number of slots (the most batches in flight at once).
  std::size_t prefetch() const { return prefetch_; }

 private:
  enum class State { Empty, Ready, Failed };
  struct Slot {
    State state = State::Empty;
    std::exception_ptr error;
  };

  void worker();

  std::size_t num_batches_;
  std::size_t prefetch_;
  Build build_;
  std::mutex mu_;
  std::condition_variable work_cv_;   // workers: a slot was released or stop
  std::condition_variable ready_cv_;  // consumer: a batch was finished
  std::vector<Slot> slots_;
  std::size_t next_claim_ = 0;  // the next batch a worker will start
  std::size_t released_ = 0;    // batches the consumer has taken
  std::size_t fail_at_;         // no batch at or after the first failed one is started
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ember::data::detail
