// The shard guard's webhook handler: an AdmissionReview body in, the HTTP answer out, with the live
// reads done through the KubeClient. Independent of the HTTPS server that carries it; it never
// writes to the API server and never throws on what a client sends.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/guard/decision.h"
#include "shardscaler/guard/guard_config.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::guard {

// The route every webhook of the configuration points at: the StatefulSet reviews and the
// target reviews are told apart by the resource they name.
inline constexpr std::string_view kGuardPath = "/guard/statefulsets";

struct HttpAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
};

// One review, for metrics and the log line of a denial. request and verdict are null when the
// body could not be decoded (then error says why).
struct ReviewRecord {
  const AdmissionRequest* request = nullptr;
  const Verdict* verdict = nullptr;
  std::string_view error;
  std::chrono::nanoseconds latency{};
};
using ReviewObserver = std::function<void(const ReviewRecord&)>;

class ShardGuard {
 public:
  // client, clock and the live reads must outlive the guard. The observer is called on the
  // handling thread after every review; it must be thread-safe.
  ShardGuard(k8s::KubeClient& client, const k8s::Clock& clock, GuardConfig config,
             ReviewObserver observer = {});
  // For tests: decisions read through `live` instead of a client.
  ShardGuard(LiveObjects& live, const k8s::Clock& clock, GuardConfig config,
             ReviewObserver observer = {});

  // 200 with the AdmissionReview response, or 400 (text/plain) naming what is wrong with the body.
  // Thread-safe: the server calls it from several workers at once.
  HttpAnswer review(std::string_view body) const;

  const GuardConfig& config() const { return config_; }

 private:
  std::unique_ptr<LiveObjects> owned_live_;
  LiveObjects& live_;
  const k8s::Clock& clock_;
  const GuardConfig config_;
  const ReviewObserver observer_;
};

}  // namespace shardscaler::guard
