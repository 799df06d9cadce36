// What the local control plane itself can absorb of the writes a first claim makes, with no
// shardscaler running: issue 10's workload (targets and their operator-shaped StatefulSets), then
// one merge patch of a label on every StatefulSet, one annotation on every target, at several
// request counts in flight. This is the floor under the scale bench's first start on the same
// machine: a first claim cannot write faster than the API server takes the writes.
//
// usage: controller_api_floor [--targets=1000] [--shards=10] [--parallel=8,16,32]
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_flags.h"
#include "process_usage.h"
#include "scale_workload.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::bench {
namespace {

using k8s::Json;
using Seconds = std::chrono::duration<double>;

const k8s::Resource kPrometheuses{"monitoring.coreos.com", "v1", "prometheuses", true};

int run(int argc, char** argv) {
  WorkloadShape shape;
  std::vector<int> parallel{8, 16, 32};
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (auto v = intFlag(a, "targets")) {
      shape.targets = *v;
    } else if (auto v = intFlag(a, "shards")) {
      shape.shards = *v;
    } else if (a.starts_with("--parallel=")) {
      parallel = intList(a.substr(11));
    } else {
      std::cerr << "usage: controller_api_floor [--targets=N] [--shards=N] [--parallel=N,...]\n";
      return 2;
    }
  }
  testenv::ControlPlane cp;
  installCrds(cp);
  auto config = k8s::loadKubeconfigFiles({cp.kubeconfigPath()});
  if (!config) throw std::runtime_error(config.error().describe());
  k8s::RestClient client(std::move(*config), {.max_idle_connections = 64});
  auto workload = createTargetsAndShards(client, shape);
  if (!workload) throw std::runtime_error(workload.error().describe());
  std::printf("workload: %d StatefulSets created in %.1f s (%.0f/s, %d in flight)\n",
              workload->stateful_sets, workload->took.count(),
              workload->stateful_sets / workload->took.count(), shape.parallel);
  const int total = shape.targets * shape.shards;
  auto version_only = std::make_shared<k8s::FieldMask>(k8s::FieldMask::keepNone());
  version_only->keep({"metadata", "resourceVersion"});
  for (int p : parallel) {
    const std::string value = "p" + std::to_string(p);
    auto started = std::chrono::steady_clock::now();
    const double cpu_before = readProcessUsage(getpid()).cpu_seconds;
    auto labelled = runParallel(total, p, [&](int i) -> k8s::Result<void> {
      const std::string target = targetName(i / shape.shards);
      const std::string name =
          test_objects::shardName(i % shape.shards, planner::TargetKind::Prometheus, target);
      // As shardscaler sends its guard labels: the answer read for its version only.
      auto r = client.patchReading(
          k8s::resources::statefulSets(), workloadNamespace(shape, i / shape.shards), name,
          k8s::PatchType::Merge,
          Json{{"metadata", {{"labels", {{"bench.shardscaler.io/floor", value}}}}}}, "",
          {.metadata_only = true, .fields = version_only});
      if (!r) return std::unexpected(r.error());
      return {};
    });
    if (!labelled) throw std::runtime_error(labelled.error().describe());
    const double label_s = Seconds(std::chrono::steady_clock::now() - started).count();
    const double label_cpu_us = (readProcessUsage(getpid()).cpu_seconds - cpu_before) / total * 1e6;
    started = std::chrono::steady_clock::now();
    auto annotated = runParallel(shape.targets, p, [&](int i) -> k8s::Result<void> {
      auto r = client.patch(
          kPrometheuses, workloadNamespace(shape, i), targetName(i), k8s::PatchType::Merge,
          Json{{"metadata", {{"annotations", {{"bench.shardscaler.io/floor", value}}}}}});
      if (!r) return std::unexpected(r.error());
      return {};
    });
    if (!annotated) throw std::runtime_error(annotated.error().describe());
    const double target_s = Seconds(std::chrono::steady_clock::now() - started).count();
    std::printf(
        "%2d in flight: %d StatefulSet label patches %.1f s (%.0f/s, client CPU %.0f us each); "
        "%d target patches %.1f s (%.0f/s)\n",
        p, total, label_s, total / label_s, label_cpu_us, shape.targets, target_s,
        shape.targets / target_s);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace shardscaler::bench

int main(int argc, char** argv) {
  try {
    return shardscaler::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "api floor failed: " << e.what() << "\n";
    return 1;
  }
}
