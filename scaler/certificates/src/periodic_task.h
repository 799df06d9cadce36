// A thread that runs one function now, then again after the delay it returns or sooner when
// woken, until stopped. Waits through the Clock, so a ManualClock drives it in tests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::certificates::detail {

class PeriodicTask {
 public:
  // `run` returns how long to wait before the next run.
  using Run = std::function<std::chrono::nanoseconds()>;

  PeriodicTask(std::shared_ptr<const k8s::Clock> clock, Run run);
  ~PeriodicTask();  // stop()
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  void start();
  // Runs again as soon as the current run (if any) ends.
  void wake();
  // Waits for a run in progress to end; no run starts after this returns. Idempotent.
  void stop();

 private:
  void loop();

  std::shared_ptr<const k8s::Clock> clock_;
  Run run_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool woken_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace shardscaler::certificates::detail
