#include "scale_workload.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "shardscaler/e2e/cluster.h"
#include "statefulset_builder.h"
#include "target_kind.h"

namespace shardscaler::bench {
namespace {

using k8s::Json;
using Seconds = std::chrono::duration<double>;

const k8s::Resource kShardSets{"shardscaler.io", "v1alpha1", "shardsets", true};

bool transient(const k8s::Error& e) {
  return e.is(k8s::ErrorKind::TooManyRequests) || e.is(k8s::ErrorKind::ServerError) ||
         e.is(k8s::ErrorKind::Transport) || e.is(k8s::ErrorKind::Timeout);
}

// Creates `object`; an object that already exists (a retried create whose first answer was
// lost) counts as created.
k8s::Result<Json> createOnce(k8s::KubeClient& client, const k8s::Resource& r, const std::string& ns,
                             const Json& object) {
  auto created = client.create(r, ns, object);
  if (created || !created.error().is(k8s::ErrorKind::AlreadyExists)) return created;
  return client.get(r, ns, object["metadata"]["name"].get<std::string>());
}

}  // namespace

std::string workloadNamespace(const WorkloadShape& shape, int target) {
  return "scale-" + std::to_string(target % shape.namespaces);
}

std::string targetName(int target) { return "t-" + std::to_string(target); }

k8s::Result<void> runParallel(int count, int parallel,
                              const std::function<k8s::Result<void>(int)>& fn) {
  std::atomic<int> next{0};
  std::mutex mutex;
  std::optional<k8s::Error> failure;
  auto work = [&] {
    while (true) {
      {
        std::lock_guard lock(mutex);
        if (failure) return;
      }
      const int i = next++;
      if (i >= count) return;
      k8s::Result<void> r;
      for (int attempt = 0; attempt <= 20; ++attempt) {
        r = fn(i);
        if (r || !transient(r.error())) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
      }
      if (!r) {
        std::lock_guard lock(mutex);
        if (!failure) {
          failure = r.error();
          failure->message = "item " + std::to_string(i) + ": " + failure->message;
        }
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(parallel));
  for (int t = 0; t < parallel; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  if (failure) return std::unexpected(*failure);
  return {};
}

void installCrds(const testenv::ControlPlane& cp) {
  const std::string files = "-f " + (e2e::sourceDir() / "deploy/crds").string() + " -f " +
                            (e2e::sourceDir() / "tests/support/crds").string();
  std::string out, err;
  if (cp.kubectl("apply " + files, &out, &err) != 0 ||
      cp.kubectl("wait --for condition=established --timeout=60s " + files, &out, &err) != 0) {
    throw std::runtime_error("installing CRDs: " + err);
  }
}

k8s::Result<CreatedWorkload> createTargetsAndShards(k8s::KubeClient& client,
                                                    const WorkloadShape& shape) {
  const auto started = std::chrono::steady_clock::now();
  auto namespaces = runParallel(shape.namespaces, shape.parallel, [&](int i) -> k8s::Result<void> {
    Json ns{{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata", {{"name", "scale-" + std::to_string(i)}}}};
    auto r = createOnce(client, k8s::resources::namespaces(), "", ns);
    if (!r) return std::unexpected(r.error());
    return {};
  });
  if (!namespaces) return std::unexpected(namespaces.error());

  const auto& kind = emulator::prometheusKind();
  std::vector<Json> targets(static_cast<size_t>(shape.targets));
  auto created_targets =
      runParallel(shape.targets, shape.parallel, [&](int i) -> k8s::Result<void> {
        const std::string ns = workloadNamespace(shape, i);
        Json target{{"apiVersion", kind.api_version},
                    {"kind", kind.kind},
                    {"metadata", {{"name", targetName(i)}, {"namespace", ns}}},
                    {"spec", {{"shards", shape.shards}, {"replicas", 0}}}};
        auto r = createOnce(client, kind.resource, ns, target);
        if (!r) return std::unexpected(r.error());
        targets[static_cast<size_t>(i)] = std::move(*r);
        return {};
      });
  if (!created_targets) return std::unexpected(created_targets.error());

  std::atomic<std::int64_t> bytes{0};
  const int total = shape.targets * shape.shards;
  auto created_sets = runParallel(total, shape.parallel, [&](int i) -> k8s::Result<void> {
    const Json& target = targets[static_cast<size_t>(i / shape.shards)];
    const std::string ns = target["metadata"]["namespace"];
    Json sts = emulator::makeStatefulSet(kind, target, i % shape.shards,
                                         emulator::statefulSetInputHash(target, nullptr));
    auto r = createOnce(client, k8s::resources::statefulSets(), ns, sts);
    if (!r) return std::unexpected(r.error());
    bytes += static_cast<std::int64_t>(r->dump().size());
    return {};
  });
  if (!created_sets) return std::unexpected(created_sets.error());
  return CreatedWorkload{.took = Seconds(std::chrono::steady_clock::now() - started),
                         .stateful_set_bytes = bytes.load(),
                         .stateful_sets = total};
}

k8s::Result<Seconds> createShardSets(k8s::KubeClient& client, const WorkloadShape& shape) {
  const auto started = std::chrono::steady_clock::now();
  auto created = runParallel(shape.targets, shape.parallel, [&](int i) -> k8s::Result<void> {
    const std::string ns = workloadNamespace(shape, i);
    Json shard_set{{"apiVersion", "shardscaler.io/v1alpha1"},
                   {"kind", "ShardSet"},
                   {"metadata", {{"name", targetName(i)}, {"namespace", ns}}},
                   {"spec",
                    {{"targetRef", {{"kind", "Prometheus"}, {"name", targetName(i)}}},
                     {"shards", shape.shards},
                     {"shardRetentionPolicy",
                      {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "1h"}}}}}}}};
    auto r = createOnce(client, kShardSets, ns, shard_set);
    if (!r) return std::unexpected(r.error());
    return {};
  });
  if (!created) return std::unexpected(created.error());
  return Seconds(std::chrono::steady_clock::now() - started);
}

k8s::Result<void> clearShardSetStatus(k8s::KubeClient& client, const WorkloadShape& shape) {
  return runParallel(shape.targets, shape.parallel, [&](int i) -> k8s::Result<void> {
    auto r = client.patch(kShardSets, workloadNamespace(shape, i), targetName(i),
                          k8s::PatchType::Merge, Json{{"status", nullptr}}, "status");
    if (!r) return std::unexpected(r.error());
    return {};
  });
}

}  // namespace shardscaler::bench
