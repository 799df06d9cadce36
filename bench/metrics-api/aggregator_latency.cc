// The cost of one external metrics request: `shardscaler_samples_per_second` of one ShardSet read
// N times through the real aggregator (kube-apiserver 1.20.2 proxying to MetricsApiHandler over
// TLS, as an HPA reads it), and N times straight to the served API with the front proxy's
// certificate (the handler's own share). Prints p50/p90/p99/max; asserts nothing.
//   build/bin/metrics_api_aggregator_latency [N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "metrics_api_aggregation.h"

namespace agg = shardscaler::metrics_api::aggregation;
using Clock = std::chrono::steady_clock;

namespace {

std::string metricPath() {
  return "/apis/external.metrics.k8s.io/v1beta1/namespaces/monitoring/"
         "shardscaler_samples_per_second?labelSelector=shardset%3Dmain";
}

void report(const char* what, std::vector<double> ms, int failures) {
  std::ranges::sort(ms);
  const auto at = [&](double q) {
    return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
  };
  std::printf("| %s | %zu | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %d |\n", what, ms.size(),
              at(0.50), at(0.90), at(0.99), ms.empty() ? 0.0 : ms.back(), failures);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 300;
  try {
    agg::startAggregation();
    agg::putShardSet("main",
                     agg::rfc3339(std::chrono::system_clock::now() + std::chrono::hours(1)));
    std::string ca;
    {
      std::ifstream in(agg::env->control_plane->caFile());
      ca.assign(std::istreambuf_iterator<char>(in), {});
    }
    shardscaler::test_kit::HttpClient through_aggregator;
    shardscaler::test_kit::ClientRequest request;
    request.url = agg::env->control_plane->server() + metricPath();
    request.ca_pem = ca;
    request.headers = {"Authorization: Bearer " + agg::env->control_plane->adminToken()};
    std::vector<double> aggregated;
    int aggregated_failures = 0;
    for (int i = 0; i < n + 10; ++i) {  // the first 10 warm the connections and caches
      const auto start = Clock::now();
      const auto reply = through_aggregator.perform(request);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (reply.status != 200) {
        ++aggregated_failures;
        if (aggregated_failures == 1)
          std::fprintf(stderr, "HTTP %ld: %s\n", reply.status, reply.body.c_str());
        continue;
      }
      if (i >= 10) aggregated.push_back(ms);
    }

    shardscaler::test_kit::HttpClient direct;
    shardscaler::test_kit::ClientRequest direct_request;
    direct_request.url = "https://" + std::string(agg::kAddress) + ":" +
                         std::to_string(agg::env->port) + metricPath();
    direct_request.ca_pem = agg::env->serving_ca.certificate().pem();
    direct_request.client_certificate_pem = agg::env->proxy_client.certificate.pem();
    direct_request.client_key_pem = agg::env->proxy_client.key.pem();
    direct_request.headers = {"X-Remote-User: admin", "X-Remote-Group: system:masters"};
    std::vector<double> handler;
    int handler_failures = 0;
    for (int i = 0; i < n + 10; ++i) {
      const auto start = Clock::now();
      const auto reply = direct.perform(direct_request);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (reply.status != 200) {
        ++handler_failures;
        continue;
      }
      if (i >= 10) handler.push_back(ms);
    }
    std::printf("| path | n | p50 | p90 | p99 | max | failures |\n|---|---|---|---|---|---|---|\n");
    report("through the aggregator (kube-apiserver -> shardscaler)", aggregated,
           aggregated_failures);
    report("straight to shardscaler (front-proxy certificate)", handler, handler_failures);
    agg::stopAggregation();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "metrics_api_aggregator_latency: %s\n", e.what());
    agg::stopAggregation();
    return 1;
  }
  return 0;
}
