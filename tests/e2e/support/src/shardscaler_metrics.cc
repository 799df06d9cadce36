#include "shardscaler/e2e/shardscaler_metrics.h"

#include <stdexcept>
#include <string>

#include "shardscaler/test_kit/metric_samples.h"

namespace shardscaler::e2e {

std::optional<double> metricSum(const ShardscalerProcess& process, std::string_view name,
                                std::string_view labels) {
  const auto [status, body] = process.httpGet(process.metricsPort(), "/metrics");
  if (status != 200) throw std::runtime_error("GET /metrics: " + std::to_string(status));
  return test_kit::sumSamples(body, name, labels);
}

std::map<std::string, double> metricSumsBy(const ShardscalerProcess& process, std::string_view name,
                                           std::span<const std::string_view> by,
                                           std::string_view labels) {
  const auto [status, body] = process.httpGet(process.metricsPort(), "/metrics");
  if (status != 200) throw std::runtime_error("GET /metrics: " + std::to_string(status));
  return test_kit::sumSamplesBy(body, name, by, labels);
}

}  // namespace shardscaler::e2e
