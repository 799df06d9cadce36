#include "scale_progress.h"

#include <sstream>
#include <stdexcept>
#include <utility>

#include "process_usage.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/test_objects/names.h"

namespace shardscaler::bench {
namespace {

using k8s::Json;
using namespace std::chrono_literals;

const k8s::Resource kShardSets{"shardscaler.io", "v1alpha1", "shardsets", true};
const k8s::Resource kPrometheuses{"monitoring.coreos.com", "v1", "prometheuses", true};

std::string keyOf(const Json& o) {
  return o["metadata"].value("namespace", "") + "/" + o["metadata"].value("name", "");
}

}  // namespace

ConvergenceWatch::ConvergenceWatch(k8s::KubeClient& client, int shards, int expected)
    : client_(client), shards_(shards), expected_(expected), thread_([this] { run(); }) {}

ConvergenceWatch::~ConvergenceWatch() {
  stop_ = true;
  thread_.join();
}

void ConvergenceWatch::note(const Json& shard_set, bool deleted) {
  const Json& status = shard_set.value("status", Json::object());
  const bool ok =
      !deleted && status.value("shards", -1) == shards_ &&
      status.value("observedGeneration", -1) == shard_set["metadata"].value("generation", -2);
  std::lock_guard lock(mutex_);
  bool& slot = converged_[keyOf(shard_set)];
  count_ += static_cast<int>(ok) - static_cast<int>(slot);
  slot = ok;
  if (!reached_ && count_ >= expected_) {
    reached_ = std::chrono::steady_clock::now();
    cv_.notify_all();
  }
}

void ConvergenceWatch::run() {
  while (!stop_) {
    auto list = k8s::listAll(client_, kShardSets, "");
    if (!list) {
      std::this_thread::sleep_for(200ms);
      continue;
    }
    for (const Json& item : (*list)["items"]) note(item, false);
    std::string rv = (*list)["metadata"].value("resourceVersion", "");
    while (!stop_) {
      k8s::WatchOptions opts;
      opts.resource_version = rv;
      opts.timeout_seconds = 60;
      auto watched = client_.watch(
          kShardSets, "", opts,
          [&](k8s::WatchEvent&& e) {
            if (e.type == k8s::WatchEventType::Bookmark) {
              rv = e.object["metadata"].value("resourceVersion", rv);
              return true;
            }
            rv = e.object["metadata"].value("resourceVersion", rv);
            note(e.object, e.type == k8s::WatchEventType::Deleted);
            return true;
          },
          &stop_);
      if (!watched) break;  // relist
    }
  }
}

std::optional<std::chrono::steady_clock::time_point> ConvergenceWatch::waitFor(
    std::chrono::seconds limit) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, limit, [&] { return reached_.has_value(); });
  return reached_;
}

std::string ConvergenceWatch::describe() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << count_ << " of " << expected_ << " ShardSets have status.shards=" << shards_ << " ("
      << converged_.size() << " seen)";
  return out.str();
}

TransitionProbe::TransitionProbe(k8s::KubeClient& client, std::string ns, std::string target,
                                 int shards, e2e::ShardscalerProcess& shardscaler)
    : client_(client),
      ns_(std::move(ns)),
      target_(std::move(target)),
      max_shards_(shards),
      shardscaler_(shardscaler),
      acknowledger_([this] { acknowledgePauses(); }) {}

TransitionProbe::~TransitionProbe() {
  stop_ = true;
  acknowledger_.join();
}

// The operator's status worker for one target: status.paused mirrors spec.paused and every
// condition carries the generation it saw.
void TransitionProbe::acknowledgePauses() {
  while (!stop_) {
    k8s::WatchOptions opts;
    opts.field_selector = "metadata.name=" + target_;
    opts.timeout_seconds = 30;
    (void)client_.watch(
        kPrometheuses, ns_, opts,
        [&](k8s::WatchEvent&& e) {
          if (e.type != k8s::WatchEventType::Added && e.type != k8s::WatchEventType::Modified) {
            return true;
          }
          const Json& o = e.object;
          const bool paused = o["spec"].value("paused", false);
          const auto generation = o["metadata"].value("generation", 0);
          const Json& status = o.value("status", Json::object());
          bool current = status.value("paused", !paused) == paused;
          for (const Json& c : status.value("conditions", Json::array())) {
            current = current && c.value("observedGeneration", -1) == generation;
          }
          if (current && status.contains("conditions")) return true;
          Json conditions = Json::array();
          for (const char* type : {"Available", "Reconciled"}) {
            conditions.push_back(
                {{"type", type}, {"status", "True"}, {"observedGeneration", generation}});
          }
          (void)client_.patch(kPrometheuses, ns_, target_, k8s::PatchType::Merge,
                              Json{{"status",
                                    {{"paused", paused},
                                     {"shards", o["spec"].value("shards", 1)},
                                     {"conditions", conditions}}}},
                              "status");
          return true;
        },
        &stop_);
  }
}

std::optional<std::chrono::duration<double>> waitQueueDrained(e2e::ShardscalerProcess& shardscaler,
                                                              std::chrono::seconds limit) {
  const auto started = std::chrono::steady_clock::now();
  int empty_looks = 0;
  while (std::chrono::steady_clock::now() - started < limit) {
    const auto depth = e2e::metricSum(shardscaler, "shardscaler_workqueue_depth");
    empty_looks = depth == 0 ? empty_looks + 1 : 0;
    if (empty_looks == 2) return std::chrono::steady_clock::now() - started;
    std::this_thread::sleep_for(1s);
  }
  return std::nullopt;
}

double TransitionProbe::requestCount() const {
  return e2e::metricSum(shardscaler_, "shardscaler_kube_requests_total").value_or(0);
}

bool TransitionProbe::done(int shards, std::string* seen) {
  auto target = client_.get(kPrometheuses, ns_, target_);
  auto shard_set = client_.get(kShardSets, ns_, target_);
  if (!target || !shard_set) return false;
  const Json& spec = (*target)["spec"];
  const Json& status = shard_set->value("status", Json::object());
  *seen = "target shards=" + spec.value("shards", Json()).dump() +
          " paused=" + spec.value("paused", Json()).dump() +
          " shardset status.shards=" + status.value("shards", Json()).dump();
  if (spec.value("shards", -1) != shards || spec.value("paused", false)) return false;
  if (status.value("shards", -1) != shards ||
      status.value("observedGeneration", -1) != (*shard_set)["metadata"].value("generation", -2)) {
    return false;
  }
  for (int i = 0; i < max_shards_; ++i) {
    const std::string name = test_objects::shardName(i, planner::TargetKind::Prometheus, target_);
    auto sts = client_.get(k8s::resources::statefulSets(), ns_, name);
    if (!sts) return false;
    const bool attached =
        (*sts)["metadata"].value("labels", Json::object()).contains("operator.prometheus.io/name");
    if (attached != (i < shards)) {
      *seen += " " + name + (attached ? " attached" : " detached");
      return false;
    }
  }
  return true;
}

TransitionCost TransitionProbe::scaleTo(int shards) {
  const double requests_before = requestCount();
  const double cpu_before = readProcessUsage(shardscaler_.pid()).cpu_seconds;
  const auto started = std::chrono::steady_clock::now();
  auto scaled = client_.patch(kShardSets, ns_, target_, k8s::PatchType::Merge,
                              Json{{"spec", {{"replicas", shards}}}}, "scale");
  if (!scaled) throw std::runtime_error("scale: " + scaled.error().describe());
  std::string seen;
  while (!done(shards, &seen)) {
    if (std::chrono::steady_clock::now() - started > 120s) {
      throw std::runtime_error("transition to " + std::to_string(shards) +
                               " did not finish in 120 s: " + seen + "\n" + shardscaler_.logTail());
    }
    std::this_thread::sleep_for(20ms);
  }
  TransitionCost cost;
  cost.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  cost.cpu_ms = (readProcessUsage(shardscaler_.pid()).cpu_seconds - cpu_before) * 1000;
  cost.requests = requestCount() - requests_before;
  return cost;
}

}  // namespace shardscaler::bench
