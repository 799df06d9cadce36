// `shardscaler release`: the finalizer's work for every ShardSet being deleted, done once from a
// kubeconfig, for when no shardscaler runs any more (an install deleted before its ShardSets). It
// runs the controller's own reconcile, so it releases exactly as a running shardscaler would; it
// never touches a ShardSet that is not being deleted.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/api/well_known.h"
#include "shardscaler/app/service.h"
#include "shardscaler/base/log.h"
#include "shardscaler/controller/shard_set_controller.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/guard/webhook_configuration.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/k8s_meta/metadata_patch.h"
#include "shardscaler/telemetry/build_info.h"

namespace shardscaler::app {
namespace {

using Json = k8s::Json;

// Between two reconciles of one ShardSet: a release waiting on the operator (its acknowledgement
// of a pause, a settle time) asks again this soon at the latest.
constexpr auto kLongestWait = std::chrono::seconds(2);

struct Pending {
  std::string key;  // "namespace/name"
  std::string ns;
  std::string name;
};

// The ShardSets of `namespaces` (all when empty) that are being deleted and still carry the
// finalizer, and a line for each that is left alone.
k8s::Result<std::vector<Pending>> beingDeleted(k8s::RestClient& client,
                                               const std::vector<std::string>& namespaces) {
  std::vector<Pending> out;
  const std::vector<std::string> scopes =
      namespaces.empty() ? std::vector<std::string>{""} : namespaces;
  for (const std::string& scope : scopes) {
    auto list = client.list(api::shardSets(), scope);
    if (!list) return std::unexpected(list.error());
    for (const Json& item : list->value("items", Json::array())) {
      const std::string ns = item.value("/metadata/namespace"_json_pointer, "");
      const std::string name = item.value("/metadata/name"_json_pointer, "");
      if (!item.contains("/metadata/deletionTimestamp"_json_pointer)) {
        std::printf("left alone: ShardSet %s/%s is not being deleted\n", ns.c_str(), name.c_str());
        continue;
      }
      if (!k8s::meta::hasFinalizer(item, api::kReleaseFinalizer))
        continue;  // released already; the API server removes it
      std::string key = ns;
      key.append("/").append(name);
      out.push_back({std::move(key), ns, name});
    }
  }
  return out;
}

}  // namespace

int runRelease(const ReleaseOptions& options) {
  auto config = k8s::loadKubeConfig(k8s::ConfigSources::fromEnvironment(options.kubeconfig));
  if (!config) {
    std::fprintf(stderr, "shardscaler: error: %s\n", config.error().message.c_str());
    return 1;
  }
  config->user_agent = "shardscaler/" + telemetry::buildInfo().version;
  k8s::RealClock clock;
  // Its writes carry shardscaler's field manager, as a running shardscaler's do.
  k8s::RestClient client(std::move(*config),
                         k8s::RestClientOptions{.field_manager = std::string(api::kFieldManager)});
  auto pending = beingDeleted(client, options.namespaces);
  if (!pending) {
    std::fprintf(stderr, "shardscaler: error: cannot list ShardSets: %s\n",
                 pending.error().describe().c_str());
    return 1;
  }
  if (pending->empty()) {
    std::printf("no ShardSet is being deleted: nothing to release\n");
    return 0;
  }
  k8s::KubeEventRecorder events(client, clock, {.instance = "shardscaler-release"});
  controller::ShardSetController controller(
      client, clock, events, nullptr,
      controller::ShardSetControllerOptions{
          .namespaces = options.namespaces,
          .guard_enforced = [&client](const std::string& ns, std::string* why) {
            auto status = guard::readGuardStatus(
                client, std::string(guard::kDefaultWebhookConfigurationName), ns);
            if (why != nullptr) *why = status.reason;
            return status.enforced;
          }});
  controller.startInformers();
  const auto deadline = clock.deadlineAfter(options.timeout);
  int left = 0;
  if (!controller.waitForSync(options.timeout)) {
    std::string why;
    controller.hasSynced(&why);
    std::fprintf(stderr, "shardscaler: error: the caches did not sync within --timeout: %s\n",
                 why.c_str());
    left = static_cast<int>(pending->size());
  }
  for (const Pending& shard_set : left > 0 ? std::vector<Pending>{} : *pending) {
    bool released = false;
    std::string last_error;
    while (!released && clock.monotonicNow() < deadline) {
      const k8s::ReconcileOutcome outcome = controller.reconcile(shard_set.key);
      if (outcome.result == k8s::ReconcileResult::Error) last_error = outcome.error;
      auto live = client.get(api::shardSets(), shard_set.ns, shard_set.name);
      released = (!live && live.error().is(k8s::ErrorKind::NotFound)) ||
                 (live && !k8s::meta::hasFinalizer(*live, api::kReleaseFinalizer));
      if (released) break;
      const auto wait = std::min<std::chrono::nanoseconds>(
          outcome.requeue_after.value_or(std::chrono::milliseconds(200)), kLongestWait);
      std::this_thread::sleep_for(wait);
    }
    if (released) {
      std::printf(
          "released: ShardSet %s (its Events name the retained StatefulSets it "
          "orphaned)\n",
          shard_set.key.c_str());
    } else {
      ++left;
      const std::string why =
          last_error.empty() ? "still waiting; see its conditions and Events" : last_error;
      std::printf("not released: ShardSet %s (%s)\n", shard_set.key.c_str(), why.c_str());
    }
  }
  controller.stop(std::chrono::seconds(1));
  events.flush();
  if (left > 0) {
    std::fprintf(stderr,
                 "shardscaler: error: %d ShardSet(s) not released; run shardscaler release again "
                 "(--timeout) once what they wait for is there\n",
                 left);
    return 1;
  }
  return 0;
}

}  // namespace shardscaler::app
