// What the e2e test of the real HPA on shardscaler's external metrics API and the demo share: a
// network namespace the aggregator can reach shardscaler in, the APIService, the HPA and its view.
// It asserts nothing, and never changes the network namespace the process started in.
#pragma once

#include <string>
#include <vector>

#include "shardscaler/e2e/cluster.h"
#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::e2e {

// Where shardscaler serves the external metrics API: the API server refuses loopback addresses in
// Endpoints, so the process's own network namespace carries this one on `lo` too.
inline constexpr const char* kMetricsApiAddress = "10.200.0.1";
inline constexpr const char* kMetricsApiService = "shardscaler-metrics-api";
inline constexpr const char* kMetricsApiServiceName = "v1beta1.external.metrics.k8s.io";
inline constexpr const char* kSamplesMetric = "shardscaler_samples_per_second";

inline const k8s::Resource kHpas{"autoscaling", "v2beta2", "horizontalpodautoscalers", true};
inline const k8s::Resource kApiServices{"apiregistration.k8s.io", "v1", "apiservices", false};

// Moves this process into a network namespace of its own, `lo` up with kMetricsApiAddress on it,
// and asks testenv for a control plane with the aggregation layer. Call it before any thread or
// child process starts (they would stay behind) and before cluster(). Needs root
// (CAP_SYS_ADMIN, CAP_NET_ADMIN) and `ip` (iproute2); throws std::runtime_error naming the step
// that failed. The namespace goes away with the last process in it.
void enterMetricsApiNetworkNamespace();

// The Service, its Endpoints at a free port on kMetricsApiAddress and the APIService
// kMetricsApiServiceName naming them, and deploy/metrics-api's read access to the metrics for the
// HPA controller (its own ServiceAccount in the test control plane). Create it before shardscaler
// starts: shardscaler injects the caBundle into an APIService it finds naming its Service.
class MetricsApiRegistration {
 public:
  explicit MetricsApiRegistration(std::string ns);  // throws when kubectl apply fails
  ~MetricsApiRegistration();  // deletes the APIService (cluster-scoped; the rest is namespaced)
  MetricsApiRegistration(const MetricsApiRegistration&) = delete;
  MetricsApiRegistration& operator=(const MetricsApiRegistration&) = delete;

  // `shardscaler run` flags that serve the guard and the external metrics API at that port.
  std::vector<std::string> shardscalerArgs() const;
  // Whether the aggregator reports the APIService Available; *seen gets its status.
  static bool available(std::string* seen);

 private:
  std::string ns_;
  int port_;
};

// The ShardSet's per-pod sample-ingestion query over `window_seconds`, with the $NAMESPACE and
// $POD_REGEX placeholders shardscaler fills in.
std::string samplesRateQuery(int window_seconds);

// An autoscaling/v2beta2 HPA named like the ShardSet it scales, on kSamplesMetric of that
// ShardSet with an AverageValue target (so it computes the ShardSet's recommendedShards).
struct SamplesHpaSpec {
  std::string ns;
  std::string shard_set = "main";
  int min_replicas = 1;
  int max_replicas = 3;
  int target_samples_per_shard = 1000;
  int scale_down_stabilization_seconds = 20;
};
std::string samplesHpaYaml(const SamplesHpaSpec& spec);

// What an HPA's status says, read once.
struct HpaView {
  bool exists = false;
  int current_replicas = -1;
  int desired_replicas = -1;
  std::string metric_value;  // the External metric's averageValue; "" before the HPA read one
  Json status;               // as read, for failure messages

  // The condition of this type, or null.
  Json condition(const std::string& type) const;
  // "reads 1234 samples/s per shard, wants 3 (has 2); ScalingActive=True/ValidMetricFound ..."
  std::string describe() const;
};
HpaView readHpa(const std::string& ns, const std::string& name);

}  // namespace shardscaler::e2e
