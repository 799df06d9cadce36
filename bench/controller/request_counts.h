// What one phase of a benchmark cost the API server, counted rather than timed: shardscaler's own
// requests by verb and resource (its /metrics), and every client's by verb and resource as the API
// server counts them (apiserver_request_total). Counts hold on a loaded machine where times do
// not, and an older build (--binary) that labels its requests only by verb is still counted by the
// API server. Benchmarks only; it reads and never writes.
#pragma once

#include <map>
#include <string>

#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/k8s_client/rest_client.h"

namespace shardscaler::bench {

// Requests by "verb resource code" (shardscaler: "patch statefulsets.apps/v1 200"; the API server:
// "PATCH statefulsets 200" or "PATCH prometheuses/status 409").
using RequestCounts = std::map<std::string, double>;

// shardscaler's requests so far (shardscaler_kube_requests_total by verb, resource and code).
RequestCounts shardscalerRequests(const e2e::ShardscalerProcess& shardscaler);
// Every request the API server has answered so far, from any client (its own /metrics, read
// with the admin's client). Throws when the API server does not answer.
RequestCounts apiServerRequests(k8s::RestClient& admin);
// The admission webhook calls the API server has made so far, by "operation webhook"
// ("UPDATE update.guard.shardscaler.io"): each is a round trip inside a write.
RequestCounts apiServerWebhookCalls(k8s::RestClient& admin);
// after - before, entries that did not change left out.
RequestCounts since(const RequestCounts& after, const RequestCounts& before);
// One line per entry, "  <title>: <verb resource> <count>", sorted by the count, largest first.
void printCounts(const std::string& title, const RequestCounts& counts);

}  // namespace shardscaler::bench
