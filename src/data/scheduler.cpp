#include "ember/data/scheduler.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace ember::data::detail {

BatchScheduler::BatchScheduler(std::size_t num_batches, std::size_t num_workers,
                               std::size_t prefetch, Build build)
    : num_batches_(num_batches),
      prefetch_(std::max<std::size_t>(prefetch, 1)),
      build_(std::move(build)),
      slots_(prefetch_),
      fail_at_(std::numeric_limits<std::size_t>::max()) {
  // More workers than slots could never all be busy.
  const std::size_t n = std::min({num_workers, prefetch_, num_batches_});
  threads_.reserve(n);
  try {
    for (std::size_t i = 0; i < n; ++i) threads_.emplace_back([this] { worker(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
    throw;
  }
}

BatchScheduler::~BatchScheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void BatchScheduler::worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Wait for a free slot, unless there is nothing left to start.
    work_cv_.wait(lock, [&] {
      return stopping_ || next_claim_ >= std::min(num_batches_, fail_at_) ||
             next_claim_ < released_ + prefetch_;
    });
    if (stopping_ || next_claim_ >= std::min(num_batches_, fail_at_)) return;
    const std::size_t k = next_claim_++;
    lock.unlock();
    std::exception_ptr error;
    try {
      build_(k);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    Slot& slot = slots_[k % prefetch_];
    slot.state = error ? State::Failed : State::Ready;
    slot.error = std::move(error);
    if (slot.state == State::Failed) fail_at_ = std::min(fail_at_, k);
    ready_cv_.notify_all();
  }
}

void BatchScheduler::wait(std::size_t k) {
  if (threads_.empty()) {
    // No workers: build in the consumer's thread; exceptions propagate directly.
    build_(k);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  Slot& slot = slots_[k % prefetch_];
  ready_cv_.wait(lock, [&] { return slot.state != State::Empty; });
  if (slot.state == State::Failed) {
    std::exception_ptr error = slot.error;
    std::rethrow_exception(error);
  }
}

void BatchScheduler::release(std::size_t k) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = slots_[k % prefetch_];
    slot.state = State::Empty;
    slot.error = nullptr;
    released_ = k + 1;
  }
  work_cv_.notify_one();
}

}  // namespace ember::data::detail
