#include "periodic_task.h"

namespace shardscaler::certificates::detail {

PeriodicTask::PeriodicTask(std::shared_ptr<const k8s::Clock> clock, Run run)
    : clock_(std::move(clock)), run_(std::move(run)) {}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { loop(); });
}

void PeriodicTask::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  changed_.notify_all();
}

void PeriodicTask::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void PeriodicTask::loop() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      woken_ = false;
    }
    const std::chrono::nanoseconds delay = run_();
    std::unique_lock lock(mutex_);
    clock_->waitUntil(lock, changed_, clock_->deadlineAfter(delay),
                      [this] { return stopping_ || woken_; });
    if (stopping_) return;
  }
}

}  // namespace shardscaler::certificates::detail
