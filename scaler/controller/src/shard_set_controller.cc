#include "shardscaler/controller/shard_set_controller.h"

#include <algorithm>

#include "shardscaler/base/log.h"
#include "shardscaler/controller/expectations.h"
#include "shardscaler/controller/plan_applier.h"
#include "shardscaler/k8s_client/task_pool.h"

#include "drain_gate.h"
#include "shard_set_caches.h"
#include "shard_set_event_mapper.h"
#include "shard_set_reader.h"
#include "shard_set_reconciler.h"
#include "transition_holds.h"

namespace shardscaler::controller {
namespace {

constexpr std::string_view kQueueName = "shardset";

}  // namespace

class ShardSetController::QueueMetrics final : public k8s::WorkQueueObserver {
 public:
  explicit QueueMetrics(telemetry::Metrics* metrics) : metrics_(metrics) {}
  void onDepth(std::size_t depth) override {
    if (metrics_ != nullptr) metrics_->setWorkQueueDepth(kQueueName, depth);
  }
  void onAdd() override {
    if (metrics_ != nullptr) metrics_->incWorkQueueAdds(kQueueName);
  }
  void onRetry() override {
    if (metrics_ != nullptr) metrics_->incWorkQueueRetries(kQueueName);
  }

 private:
  telemetry::Metrics* metrics_;
};

ShardSetController::ShardSetController(k8s::KubeClient& client, const k8s::Clock& clock,
                                       k8s::EventRecorder& events, telemetry::Metrics* metrics,
                                       ShardSetControllerOptions options,
                                       ingestion::IngestionSource* ingestion)
    : metrics_(metrics),
      workers_(std::max(options.workers, 1)),
      queue_metrics_(std::make_unique<QueueMetrics>(metrics)),
      expectations_(std::make_unique<Expectations>()) {
  if (options.namespaces.empty()) options.namespaces.emplace_back();
  caches_ = std::make_unique<ShardSetCaches>(
      client, clock, metrics,
      ShardSetCaches::Options{.namespaces = options.namespaces,
                              .resync_period = options.resync_period});
  event_mapper_ = std::make_unique<ShardSetEventMapper>(
      *expectations_, *caches_, [this](const std::string& key) { enqueue(key); });
  // A reconcile sends at most PlanApplier::kMaxWritesInFlight requests at once.
  side_requests_ = std::make_unique<k8s::TaskPool>((PlanApplier::kMaxWritesInFlight - 1) *
                                                   static_cast<std::size_t>(workers_));
  DrainCheck drain_check = options.drain_check;
  if (!drain_check) {
    drain_check = [checker = std::make_shared<ingestion::DrainChecker>(
                       ingestion::prometheusClientFactory(), std::chrono::seconds(10),
                       options.drain_url_policy, options.drain_pods)](
                      const planner::DrainPolicy& policy, const ingestion::DrainRequest& request) {
      return checker->check(policy, request);
    };
  }
  reader_ = std::make_unique<ShardSetReader>(client, *caches_, *expectations_, *side_requests_,
                                             options.guard_enforced, std::move(drain_check), clock);
  guard_status_ = std::make_unique<GuardStatusCache>(clock, options.guard_enforced);
  holds_ = std::make_unique<TransitionHolds>(clock, options.apply_failure_hold);
  drain_ = std::make_unique<DrainGate>(clock);
  reconciler_ = std::make_unique<ShardSetReconciler>(
      ShardSetReconciler::Parts{.client = client,
                                .clock = clock,
                                .events = events,
                                .metrics = metrics,
                                .ingestion = ingestion,
                                .caches = *caches_,
                                .expectations = *expectations_,
                                .reader = *reader_,
                                .guard_status = *guard_status_,
                                .holds = *holds_,
                                .drain = *drain_,
                                .side_requests = *side_requests_},
      ShardSetReconciler::Options{.max_rounds = options.max_rounds,
                                  .settle_time = options.settle_time,
                                  .pause_ack_timeout = options.pause_ack_timeout,
                                  .drain_reload_floor = options.drain_reload_floor});
  work_loop_ = std::make_unique<k8s::Controller>(
      clock, [this](const std::string& key) { return reconcile(key); }, workLoopOptions());
}

ShardSetController::~ShardSetController() { stop(std::chrono::seconds(0)); }

// client-go's WaitForCacheSync before the workers: a reconcile that starts while the StatefulSet
// informer still lists is queued again by each add the list delivers. The queue collects those
// adds meanwhile, one entry per ShardSet; the wait goes in steps of kCacheSyncStep, so a stop is
// seen within one.
k8s::ControllerOptions ShardSetController::workLoopOptions() {
  return k8s::ControllerOptions{
      .workers = workers_,
      .queue_observer = queue_metrics_.get(),
      .wait_ready = [this](std::chrono::nanoseconds step) { return waitForSync(step); },
      .ready_step = kCacheSyncStep,
      .on_not_ready =
          [this] {
            std::string why;
            hasSynced(&why);
            base::logEvent(base::LogLevel::Info, "workers wait for the caches to sync",
                           {{"pending", why}});
          },
      .on_reconciled =
          [metrics = metrics_](const std::string&, const k8s::ReconcileOutcome& outcome,
                               std::chrono::nanoseconds took) {
            if (metrics == nullptr) return;
            metrics->observeReconcile(outcome.result, std::chrono::duration<double>(took).count());
          },
  };
}

void ShardSetController::startInformers() { caches_->start(*event_mapper_); }

bool ShardSetController::hasSynced(std::string* why) const { return caches_->hasSynced(why); }

bool ShardSetController::waitForSync(std::chrono::nanoseconds timeout) const {
  return caches_->waitForSync(timeout);
}

void ShardSetController::startWorkers() { work_loop_->start(); }

bool ShardSetController::stop(std::chrono::nanoseconds drain_timeout) {
  drain_->beginDrain(drain_timeout);
  const bool drained = work_loop_->shutDown(drain_timeout);
  caches_->stop();
  return drained;
}

void ShardSetController::leadershipLost() { drain_->leadershipLost(); }

void ShardSetController::enqueue(const std::string& key) { work_loop_->enqueue(key); }

k8s::ReconcileOutcome ShardSetController::reconcile(const std::string& key) {
  return reconciler_->reconcile(key);
}

k8s::Result<planner::Plan> ShardSetController::dryRun(const std::string& ns,
                                                      const std::string& name,
                                                      std::optional<int32_t> shards) {
  return reconciler_->dryRun(ns, name, shards);
}

}  // namespace shardscaler::controller
