// A controller's worker loop (client-go's processNextWorkItem, controller-runtime's Controller):
// N workers take keys from a WorkQueue and hand them to a Reconciler. It never reads objects.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/rate_limiter.h"
#include "shardscaler/k8s_client/reconciler.h"
#include "shardscaler/k8s_client/work_queue.h"

namespace shardscaler::k8s {

struct ControllerOptions {
  int workers = 1;
  // Null: defaultControllerRateLimiter(clock).
  std::unique_ptr<RateLimiter> rate_limiter;
  // The queue's metrics hook; may be null, must outlive the Controller.
  WorkQueueObserver* queue_observer = nullptr;
  // client-go's WaitForCacheSync before the workers: each worker calls this (with ready_step as
  // its timeout) until it returns true, and looks for a shutdown between calls. Unset: ready.
  std::function<bool(std::chrono::nanoseconds timeout)> wait_ready;
  std::chrono::nanoseconds ready_step = std::chrono::seconds(1);
  // Called once, by the first worker whose wait_ready step timed out (e.g. to log why).
  std::function<void()> on_not_ready;
  // After every reconcile, before the key is requeued or forgotten (metrics, logs). `took` is on
  // the Clock.
  std::function<void(const std::string& key, const ReconcileOutcome& outcome,
                     std::chrono::nanoseconds took)>
      on_reconciled;
};

// The loop of each worker: get -> reconcile -> on Success forget (and addAfter requeue_after),
// otherwise addRateLimited -> done. The queue never hands one key to two workers.
// Thread-safety: enqueue* from any thread; start and shutDown from one thread.
class Controller {
 public:
  // The clock and whatever the reconciler refers to must outlive the Controller.
  Controller(const Clock& clock, Reconciler reconciler, ControllerOptions options = {});
  ~Controller();  // shutDown(0)
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts options.workers workers (at least one). Once only; not after shutDown.
  void start();

  void enqueue(const std::string& key);
  void enqueueAfter(const std::string& key, std::chrono::nanoseconds delay);

  // Stops handing out keys (queued ones are dropped: a new leader lists them again) and waits up
  // to drain_timeout on the Clock for the reconciles in flight. False when one was still running
  // at the deadline. The workers keep running until shutDown joins them.
  bool drain(std::chrono::nanoseconds drain_timeout);
  // drain(drain_timeout), then joins the workers (each still finishes the reconcile it is in).
  // Returns drain's answer. Idempotent.
  bool shutDown(std::chrono::nanoseconds drain_timeout);
  bool shuttingDown() const;

  // For tests and metrics: the queue itself.
  WorkQueue& queue() { return queue_; }

 private:
  void worker();
  bool waitUntilReady();
  void processOne(const std::string& key);

  const Clock& clock_;
  Reconciler reconciler_;
  ControllerOptions options_;
  WorkQueue queue_;
  std::once_flag not_ready_reported_;
  std::mutex workers_mutex_;
  std::vector<std::thread> workers_;
};

}  // namespace shardscaler::k8s
