#include "shardscaler/e2e/external_metrics_hpa.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::e2e {
namespace {

// A port nothing listens on at kMetricsApiAddress (the namespace is this process's own, so no
// one else can take it between this call and shardscaler's bind).
int freeMetricsApiPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, kMetricsApiAddress, &addr.sin_addr);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) {
    throw std::runtime_error(std::string("cannot bind ") + kMetricsApiAddress +
                             " (was enterMetricsApiNetworkNamespace() called?)");
  }
  return ntohs(addr.sin_port);
}

// A resource.Quantity as the HPA writes averageValue ("1516977m", "42", "2k"), for people to
// read; nullopt for any other form, which is then shown as written.
std::optional<double> quantityValue(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  std::string digits = text;
  if (text.back() == 'm') scale = 1e-3;
  if (text.back() == 'k') scale = 1e3;
  if (scale != 1) digits.pop_back();
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value * scale;
}

}  // namespace

void enterMetricsApiNetworkNamespace() {
  if (::unshare(CLONE_NEWNET) != 0) {
    throw std::runtime_error(std::string("unshare(CLONE_NEWNET) (needs root): ") +
                             std::strerror(errno));
  }
  for (const std::string& command :
       {std::string("ip link set lo up"),
        std::string("ip addr add ") + kMetricsApiAddress + "/32 dev lo"}) {
    if (std::system(command.c_str()) != 0) {
      throw std::runtime_error("`" + command + "` failed in the new network namespace");
    }
  }
  testenv::setSharedControlPlaneOptions({.aggregation_layer = true});
}

MetricsApiRegistration::MetricsApiRegistration(std::string ns)
    : ns_(std::move(ns)), port_(freeMetricsApiPort()) {
  // The HPA controller asks as system:serviceaccount:kube-system:horizontal-pod-autoscaler, which
  // shardscaler's SubjectAccessReview must find allowed: deploy/'s ClusterRole and binding, as is.
  const auto reader =
      kubectl("apply -f " + (sourceDir() / "deploy/metrics-api/hpa_reader.yaml").string());
  if (reader.exit_code != 0) throw std::runtime_error("kubectl apply hpa_reader: " + reader.err);
  const std::string port = std::to_string(port_);
  const std::string service = kMetricsApiService;
  apply("apiVersion: v1\nkind: Service\nmetadata: {name: " + service + ", namespace: " + ns_ +
        "}\nspec:\n  ports: [{name: https, port: 443, targetPort: " + port +
        "}]\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: " + service +
        ", namespace: " + ns_ + "}\nsubsets:\n- addresses: [{ip: " + kMetricsApiAddress +
        "}]\n  ports: [{name: https, port: " + port +
        "}]\n---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: " +
        kMetricsApiServiceName +
        "}\nspec:\n  group: external.metrics.k8s.io\n  version: v1beta1\n"
        "  groupPriorityMinimum: 100\n  versionPriority: 100\n  service: {name: " +
        service + ", namespace: " + ns_ + ", port: 443}\n");
}

MetricsApiRegistration::~MetricsApiRegistration() {
  (void)adminClient().remove(kApiServices, "", kMetricsApiServiceName);
}

std::vector<std::string> MetricsApiRegistration::shardscalerArgs() const {
  const std::string address = kMetricsApiAddress;
  return {"--webhook-bind-address=" + address + ":" + std::to_string(port_),
          "--webhook-cert-secret=" + ns_ + "/shardscaler-webhook-cert",
          "--webhook-hosts=" + address, "--external-metrics-api=true",
          "--external-metrics-service=" + ns_ + "/" + kMetricsApiService};
}

bool MetricsApiRegistration::available(std::string* seen) {
  Json s = getOrNull(kApiServices, "", kMetricsApiServiceName);
  if (seen != nullptr) *seen = s.is_object() ? s["status"].dump() : "no APIService";
  if (!s.is_object()) return false;
  const Json status = s.value("status", Json::object());  // none yet right after the create
  for (const Json& c : status.is_object() ? status.value("conditions", Json::array()) : Json()) {
    if (c.value("type", "") == "Available") return c.value("status", "") == "True";
  }
  return false;
}

std::string samplesRateQuery(int window_seconds) {
  return "sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total{namespace=\"$NAMESPACE\","
         "pod=~\"$POD_REGEX\"}[" +
         std::to_string(window_seconds) + "s]))";
}

std::string samplesHpaYaml(const SamplesHpaSpec& spec) {
  return "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: " +
         spec.shard_set + ", namespace: " + spec.ns +
         "}\nspec:\n  scaleTargetRef: {apiVersion: shardscaler.io/v1alpha1, kind: ShardSet, "
         "name: " +
         spec.shard_set + "}\n  minReplicas: " + std::to_string(spec.min_replicas) +
         "\n  maxReplicas: " + std::to_string(spec.max_replicas) +
         "\n  metrics:\n  - type: External\n    external:\n      metric:\n        name: " +
         kSamplesMetric + "\n        selector: {matchLabels: {shardset: " + spec.shard_set +
         "}}\n      target: {type: AverageValue, averageValue: \"" +
         std::to_string(spec.target_samples_per_shard) +
         "\"}\n  behavior:\n    scaleDown: {stabilizationWindowSeconds: " +
         std::to_string(spec.scale_down_stabilization_seconds) + "}\n";
}

Json HpaView::condition(const std::string& type) const {
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return nullptr;
}

std::string HpaView::describe() const {
  if (!exists) return "no HPA";
  if (metric_value.empty() && condition("ScalingActive").is_null())
    return "has decided nothing yet";
  std::string text = "has not read the metric";
  if (!metric_value.empty()) {
    const std::optional<double> value = quantityValue(metric_value);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", value.value_or(-1));
    text = "reads " + (value ? std::string(buf) : metric_value) + " samples/s per shard";
  }
  text += ", wants " + std::to_string(desired_replicas) + " (has " +
          std::to_string(current_replicas) + ")";
  for (const char* type : {"AbleToScale", "ScalingActive", "ScalingLimited"}) {
    Json c = condition(type);
    if (!c.is_object()) continue;
    text += std::string("; ") + type + "=" + c.value("status", "") + "/" + c.value("reason", "");
  }
  return text;
}

HpaView readHpa(const std::string& ns, const std::string& name) {
  HpaView view;
  Json h = getOrNull(kHpas, ns, name);
  if (!h.is_object()) return view;
  view.exists = true;
  view.status = h.value("status", Json::object());
  view.current_replicas = view.status.value("currentReplicas", -1);
  view.desired_replicas = view.status.value("desiredReplicas", -1);
  for (const Json& m : view.status.value("currentMetrics", Json::array())) {
    if (m.value("type", "") == "External") {
      view.metric_value = m["external"]["current"].value("averageValue", "");
    }
  }
  return view;
}

}  // namespace shardscaler::e2e
