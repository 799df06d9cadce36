#include "shardscaler/guard/shard_guard.h"

#include "shardscaler/guard/admission_review.h"
#include "shardscaler/guard/target_decision.h"

namespace shardscaler::guard {

ShardGuard::ShardGuard(k8s::KubeClient& client, const k8s::Clock& clock, GuardConfig config,
                       ReviewObserver observer)
    : owned_live_(std::make_unique<KubeLiveObjects>(client)),
      live_(*owned_live_),
      clock_(clock),
      config_(std::move(config)),
      observer_(std::move(observer)) {}

ShardGuard::ShardGuard(LiveObjects& live, const k8s::Clock& clock, GuardConfig config,
                       ReviewObserver observer)
    : live_(live), clock_(clock), config_(std::move(config)), observer_(std::move(observer)) {}

HttpAnswer ShardGuard::review(std::string_view body) const {
  const auto started = clock_.monotonicNow();
  auto request = decodeAdmissionReview(body);
  if (!request) {
    if (observer_) {
      observer_(ReviewRecord{.error = request.error(), .latency = clock_.monotonicNow() - started});
    }
    return HttpAnswer{400, "text/plain; charset=utf-8", request.error() + "\n"};
  }
  // KubeLiveObjects holds no state between calls, so one instance serves every thread.
  const Verdict verdict = isTargetReview(*request) ? decideTargetUpdate(*request, live_, config_)
                                                   : decide(*request, live_, clock_.now(), config_);
  std::string response = encodeAdmissionResponse(
      request->uid, AdmissionAnswer{.allowed = verdict.allowed, .message = verdict.message});
  if (observer_) {
    observer_(ReviewRecord{
        .request = &*request, .verdict = &verdict, .latency = clock_.monotonicNow() - started});
  }
  return HttpAnswer{200, "application/json", std::move(response)};
}

}  // namespace shardscaler::guard
