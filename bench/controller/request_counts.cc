#include "request_counts.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/test_kit/metric_samples.h"

namespace shardscaler::bench {

RequestCounts shardscalerRequests(const e2e::ShardscalerProcess& shardscaler) {
  constexpr std::string_view kBy[] = {"verb", "resource", "code"};
  return e2e::metricSumsBy(shardscaler, "shardscaler_kube_requests_total", kBy);
}

namespace {

std::string apiServerMetrics(k8s::RestClient& admin) {
  auto body = admin.getPath("/metrics");
  if (!body || !body->is_string()) {
    throw std::runtime_error("the API server's /metrics: " +
                             (body ? std::string("not text") : body.error().describe()));
  }
  return body->get<std::string>();
}

}  // namespace

RequestCounts apiServerRequests(k8s::RestClient& admin) {
  constexpr std::string_view kBy[] = {"verb", "resource", "subresource", "code"};
  RequestCounts counts;
  for (auto& [key, value] :
       test_kit::sumSamplesBy(apiServerMetrics(admin), "apiserver_request_total", kBy)) {
    // "PATCH prometheuses status 200" -> "PATCH prometheuses/status 200"; "LIST statefulsets  200"
    // -> "LIST statefulsets 200".
    std::istringstream words(key);
    std::string verb, resource, subresource, code;
    words >> verb >> resource;
    std::getline(words >> std::ws, subresource);
    if (const auto space = subresource.rfind(' '); space != std::string::npos) {
      code = subresource.substr(space + 1);
      subresource.resize(space);
    } else {
      code = std::exchange(subresource, "");
    }
    std::string out = verb;
    out.append(" ").append(resource);
    if (!subresource.empty()) out.append("/").append(subresource);
    out.append(" ").append(code);
    counts[out] += value;
  }
  return counts;
}

RequestCounts apiServerWebhookCalls(k8s::RestClient& admin) {
  constexpr std::string_view kBy[] = {"operation", "name"};
  return test_kit::sumSamplesBy(
      apiServerMetrics(admin), "apiserver_admission_webhook_admission_duration_seconds_count", kBy);
}

RequestCounts since(const RequestCounts& after, const RequestCounts& before) {
  RequestCounts out;
  for (const auto& [key, value] : after) {
    auto it = before.find(key);
    const double delta = value - (it == before.end() ? 0 : it->second);
    if (delta != 0) out[key] = delta;
  }
  return out;
}

void printCounts(const std::string& title, const RequestCounts& counts) {
  std::vector<std::pair<std::string, double>> sorted(counts.begin(), counts.end());
  std::ranges::stable_sort(sorted,
                           [](const auto& a, const auto& b) { return a.second > b.second; });
  double total = 0;
  for (const auto& [key, value] : sorted) total += value;
  std::printf("%s: %.1f\n", title.c_str(), total);
  for (const auto& [key, value] : sorted) std::printf("  %-64s %9.1f\n", key.c_str(), value);
}

}  // namespace shardscaler::bench
