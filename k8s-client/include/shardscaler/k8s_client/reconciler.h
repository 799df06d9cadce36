// What a controller's reconcile of one key returns (controller-runtime's reconcile.Result and
// error in one value). It is a value only: the Controller decides what the queue does with it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace shardscaler::k8s {

enum class ReconcileResult {
  Success,  // done: the key's backoff is reset (and it comes back after requeue_after, if set)
  Requeue,  // not done, no error: retried with the key's backoff
  Error,    // failed: retried with the key's backoff
};

// What one reconcile decided about its key.
struct ReconcileOutcome {
  ReconcileResult result = ReconcileResult::Success;
  std::optional<std::chrono::nanoseconds> requeue_after;  // Success: come back then
  std::string error;                                      // Error: what failed

  static ReconcileOutcome success() { return {}; }
  static ReconcileOutcome requeueAfter(std::chrono::nanoseconds after) {
    return {.requeue_after = after};
  }
  static ReconcileOutcome failure(std::string error) {
    return {.result = ReconcileResult::Error, .error = std::move(error)};
  }
};

// Level-triggered: reads the current state of `key` ("namespace/name") and moves it toward the
// desired one; never acts on the event that queued the key.
using Reconciler = std::function<ReconcileOutcome(const std::string& key)>;

}  // namespace shardscaler::k8s
