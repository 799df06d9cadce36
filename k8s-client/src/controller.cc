#include "shardscaler/k8s_client/controller.h"

#include <algorithm>
#include <utility>

namespace shardscaler::k8s {

Controller::Controller(const Clock& clock, Reconciler reconciler, ControllerOptions options)
    : clock_(clock),
      reconciler_(std::move(reconciler)),
      options_(std::move(options)),
      queue_(clock, std::move(options_.rate_limiter), options_.queue_observer) {}

Controller::~Controller() { shutDown(std::chrono::nanoseconds(0)); }

void Controller::start() {
  std::lock_guard lock(workers_mutex_);
  if (!workers_.empty() || queue_.shuttingDown()) return;
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] { worker(); });
  }
}

void Controller::enqueue(const std::string& key) { queue_.add(key); }

void Controller::enqueueAfter(const std::string& key, std::chrono::nanoseconds delay) {
  queue_.addAfter(key, delay);
}

bool Controller::drain(std::chrono::nanoseconds drain_timeout) {
  return queue_.shutDownWithDrain(drain_timeout);
}

bool Controller::shutDown(std::chrono::nanoseconds drain_timeout) {
  const bool drained = drain(drain_timeout);
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(workers_mutex_);
    workers.swap(workers_);
  }
  for (auto& w : workers) {
    if (w.joinable()) w.join();
  }
  return drained;
}

bool Controller::shuttingDown() const { return queue_.shuttingDown(); }

// Bounded steps, so that a shutdown is seen within one. Meanwhile the queue collects the adds
// the informers' lists deliver, one entry per key.
bool Controller::waitUntilReady() {
  if (!options_.wait_ready) return true;
  while (!options_.wait_ready(options_.ready_step)) {
    if (queue_.shuttingDown()) return false;
    if (options_.on_not_ready) std::call_once(not_ready_reported_, options_.on_not_ready);
  }
  return true;
}

void Controller::worker() {
  if (!waitUntilReady()) return;
  while (auto key = queue_.get()) processOne(*key);
}

void Controller::processOne(const std::string& key) {
  const auto started = clock_.monotonicNow();
  const ReconcileOutcome outcome = reconciler_(key);
  if (options_.on_reconciled) options_.on_reconciled(key, outcome, clock_.monotonicNow() - started);
  switch (outcome.result) {
    case ReconcileResult::Success:
      queue_.forget(key);
      if (outcome.requeue_after) queue_.addAfter(key, *outcome.requeue_after);
      break;
    case ReconcileResult::Requeue:
    case ReconcileResult::Error:
      queue_.addRateLimited(key);
      break;
  }
  queue_.done(key);
}

}  // namespace shardscaler::k8s
