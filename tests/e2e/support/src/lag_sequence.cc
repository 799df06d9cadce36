#include "shardscaler/e2e/lag_sequence.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "lag_report.h"
#include "shardscaler/e2e/deploy_rbac.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shard_history.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/testenv/loopback_ports.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kGuardLabel = "e2e.shardscaler.io/lag-guarded-by";
constexpr std::chrono::seconds kGuardReadyTimeout{30};

std::string goDuration(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

std::string setText(const std::set<int>& s) {
  std::string out = "{";
  for (int i : s) out += (out.size() > 1 ? "," : "") + std::to_string(i);
  return out + "}";
}

class Sequence {
 public:
  explicit Sequence(const LagPlan& plan) : plan_(plan), started_(SteadyClock::now()) {}
  ~Sequence() { teardown(); }
  Sequence(const Sequence&) = delete;
  Sequence& operator=(const Sequence&) = delete;

  LagOutcome run();
  const std::filesystem::path& logs() const { return logs_; }

 private:
  void setUp();
  void setUpIdentities();
  void checkOperatorDeleteRefused();
  void startShardscaler(const std::string& why);
  void step(const LagStep& s);
  void scaleTo(const LagStep& s);
  bool converged(std::string* seen) const;
  void waitForConvergence(const std::string& when);
  void evaluate(LagOutcome& out);
  void teardown();
  double since(SteadyClock::time_point t) const {
    return std::chrono::duration<double>(t - started_).count();
  }
  void note(const std::string& line) {
    timeline_.push_back(fmt::format("t={:7.3f}s {}", since(SteadyClock::now()), line));
  }
  void violate(std::string rule, std::string message) {
    violations_.push_back({std::move(rule), std::move(message)});
  }

  const LagPlan& plan_;
  const SteadyClock::time_point started_;
  std::string ns_;
  std::filesystem::path logs_;
  std::optional<GuardWebhook> webhook_;
  std::unique_ptr<ShardHistory> history_;
  std::unique_ptr<testenv::OperatorEmulator> emulator_;
  std::unique_ptr<testenv::ApiFaultProxy> proxy_;
  std::unique_ptr<ShardscalerProcess> shardscaler_;
  std::string operator_token_;             // the emulator's
  std::string shardscaler_token_;          // shardscaler's
  std::vector<std::string> cluster_rbac_;  // cluster-scoped RBAC this sequence applied
  int spec_shards_ = 0;  // the ShardSet's spec.shards as this sequence last wrote it
  std::vector<PauseCause> causes_;
  std::vector<std::string> timeline_;
  std::vector<Violation> violations_;
  LagCounts counts_;
  std::chrono::milliseconds convergence_{0};
};

void Sequence::setUp() {
  ns_ = createNamespace("lag");
  logs_ = testLogDir() / ("seq-" + std::to_string(plan_.seed));
  std::filesystem::remove_all(logs_);
  std::filesystem::create_directories(logs_ / "emulator");
  history_ = std::make_unique<ShardHistory>(ns_);
  if (plan_.mode == GuardMode::Guarded) {
    webhook_ = GuardWebhook{.configuration = "lag-guard-" + ns_,
                            .port = testenv::pickFreePort(),
                            .label_key = kGuardLabel,
                            .label_value = ns_};
    guardNamespace(*webhook_, ns_);
    installGuardWebhook(*webhook_);
  }
  setUpIdentities();
  spec_shards_ = plan_.initial_shards;
  apply(
      "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
      "namespace: " +
      ns_ + "}\nspec: {replicas: 1, shards: " + std::to_string(plan_.initial_shards) + "}\n");
  ShardSetSpec spec{.shards = plan_.initial_shards,
                    .min_shards = plan_.min_shards,
                    .max_shards = plan_.max_shards,
                    .when_scaled = plan_.retain ? "Retain" : "Delete"};
  if (plan_.retain) spec.retention_period = "1h";
  apply(shardSetYaml(ns_, "main", spec));

  testenv::OperatorEmulatorOptions emulator{
      .kubeconfig = cluster().writeKubeconfig("lag-operator-" + ns_, operator_token_),
      .namespaces = {ns_},
      .work_dir = logs_ / "emulator",
      .statefulset_lag = plan_.statefulset_lag,
      .target_lag = plan_.target_lag,
      .sync_latency = plan_.sync_latency,
      .sync_latency_jitter = plan_.sync_latency_jitter,
      .seed = plan_.seed,
      .extra_args = {plan_.operator_shard_retention ? "--shard-retention=true"
                                                    : "--shard-retention=false"}};
  emulator_ = std::make_unique<testenv::OperatorEmulator>(emulator);

  proxy_ = std::make_unique<testenv::ApiFaultProxy>(cluster(), plan_.seed);
  proxy_->setFaults(plan_.faults);
  startShardscaler("shardscaler started");
  if (webhook_) {
    std::string why;
    const bool enforced = test_kit::eventually(
        60s, kPoll,
        [&](std::string* seen) {
          const auto status = guard::readGuardStatus(adminClient(), webhook_->configuration, ns_);
          const auto ready = shardscaler_->httpGet(shardscaler_->probePort(), "/readyz");
          *seen = status.reason + "; /readyz " + std::to_string(ready.first) + " " + ready.second;
          return status.enforced && ready.first == 200;
        },
        &why);
    if (!enforced) throw std::runtime_error("the guard was never enforced: " + why);
    if (auto called = waitUntilGuardCalled(*shardscaler_, ns_); !called) {
      throw std::runtime_error(called.message());
    }
    note("the API server calls the guard");
  }
  waitForConvergence("at the start");
}

void Sequence::setUpIdentities() {
  const std::string plain_user = "user-" + std::to_string(kLagOperatorUser);
  std::vector<Json> objects;
  switch (plan_.identities) {
    case Identities::Apart:
      grantOperatorRole(ns_, plain_user);
      operator_token_ = cluster().userToken(kLagOperatorUser);
      shardscaler_token_ = cluster().adminToken();
      return;
    case Identities::Shared:
      grantOperatorRole(ns_, plain_user);
      objects = renderedRbac(ns_);
      std::erase_if(objects, [](const Json& o) {
        return !o.value("kind", "").ends_with("Role") && !o.value("kind", "").ends_with("Binding");
      });
      for (Json& o : objects) {
        if (!o.contains("subjects")) continue;
        o["subjects"] = Json::array(
            {{{"kind", "User"}, {"name", plain_user}, {"apiGroup", "rbac.authorization.k8s.io"}}});
      }
      break;
    case Identities::Sidecar:
      objects = renderedIdentities("overlays/prometheus-operator-sidecar", ns_);
      grantOperatorRole(ns_, "system:serviceaccount:" + ns_ + ":prometheus-operator");
      break;
  }
  if (webhook_) renameResource(objects, "shardscaler-guard", webhook_->configuration);
  cluster_rbac_ = clusterScoped(objects);
  apply(yamlStream(objects));
  if (plan_.identities == Identities::Shared) {
    operator_token_ = shardscaler_token_ = cluster().userToken(kLagOperatorUser);
  } else {
    operator_token_ = serviceAccountToken(ns_, "prometheus-operator");
    shardscaler_token_ = secretToken(ns_, "shardscaler-token");
  }
  note("identities: " + std::string(toString(plan_.identities)));
}

// Whoever shardscaler acts as, the API server must refuse the operator's DELETE of an active shard
// (a server-side dry run, judged by the guard exactly as the real one).
void Sequence::checkOperatorDeleteRefused() {
  // A Service sends the webhook's calls only to a ready pod; until shardscaler has loaded its
  // serving certificate, the API server's call fails and the DELETE is refused without a rule.
  std::string readiness;
  if (!test_kit::eventually(
          kGuardReadyTimeout, kPoll,
          [&](std::string* seen) {
            auto [code, body] = shardscaler_->httpGet(shardscaler_->probePort(), "/readyz");
            *seen = std::to_string(code) + " " + body;
            return code == 200;
          },
          &readiness)) {
    violate("GuardNotReady", fmt::format("shardscaler not ready within {} s: /readyz {}",
                                         kGuardReadyTimeout.count(), readiness));
    return;
  }
  const Json target = getOrNull(kPrometheuses, ns_, "main");
  const int shards = target.is_object() ? target["spec"].value("shards", 1) : 1;
  const std::string shard = test_objects::shardName(std::max(shards, 1) - 1);
  auto r = kubectl("--token=" + operator_token_ + " delete statefulset " + shard + " -n " + ns_ +
                   " --dry-run=server");
  ++counts_.operator_dry_runs;
  // Refused by any rule of the guard: ActiveShard, or ReadFailed while the fault proxy fails the
  // guard's own reads (it fails closed).
  if (r.exit_code == 0 || r.err.find("shardscaler guard: rule ") == std::string::npos) {
    violate("OperatorDeleteAdmitted", "a server-side dry-run DELETE of active shard " + shard +
                                          " as the operator was not refused by the guard: exit " +
                                          std::to_string(r.exit_code) + ", " + r.out + r.err);
  } else {
    note("the operator's dry-run DELETE of " + shard + " was refused");
  }
}

void Sequence::startShardscaler(const std::string& why) {
  if (!shardscaler_) {
    ShardscalerOptions options{
        .kubeconfig = proxy_->writeKubeconfig("shardscaler-" + ns_, shardscaler_token_),
        .namespaces = {ns_},
        .extra_args = {"--settle-time=" + goDuration(plan_.settle_time)},
        .log_file = logs_ / "shardscaler.log"};
    if (webhook_) {
      for (auto& a : guardServingArgs(*webhook_, ns_)) options.extra_args.push_back(std::move(a));
    }
    for (const auto& a : plan_.shardscaler_args) options.extra_args.push_back(a);
    shardscaler_ = std::make_unique<ShardscalerProcess>(std::move(options));
  } else {
    shardscaler_->start();
  }
  causes_.push_back({SteadyClock::now(), why});
  note(why);
}

void Sequence::scaleTo(const LagStep& s) {
  const bool kubectl_scale = s.kind == LagStep::Kind::KubectlScale;
  std::string failure;
  bool written = false;
  for (int attempt = 0; attempt < 5 && !written; ++attempt) {
    if (kubectl_scale) {
      auto r = kubectl("scale shardset/main -n " + ns_ + " --replicas=" + std::to_string(s.shards));
      written = r.exit_code == 0;
      failure = r.err;
      continue;
    }
    // As the HPA controller: read the Scale, PUT it back with its resourceVersion.
    auto scale = adminClient().get(kShardSets, ns_, "main", "scale");
    if (!scale) {
      failure = scale.error().describe();
      continue;
    }
    (*scale)["spec"]["replicas"] = s.shards;
    auto updated = adminClient().update(kShardSets, ns_, *scale, "scale");
    written = updated.has_value();
    if (!written) failure = updated.error().describe();
  }
  if (!written) throw std::runtime_error("scale write failed: " + failure);
  ++counts_.scale_writes;
  const auto clamp = [&](int n) { return std::clamp(n, plan_.min_shards, plan_.max_shards); };
  const bool changed = clamp(s.shards) != clamp(spec_shards_);
  spec_shards_ = s.shards;
  const std::string what = fmt::format("{} to {} (wanted {}{})",
                                       kubectl_scale ? "kubectl scale" : "scale subresource PUT",
                                       s.shards, clamp(s.shards), changed ? "" : ", unchanged");
  if (changed) causes_.push_back({SteadyClock::now(), what});
  note(what);
}

void Sequence::step(const LagStep& s) {
  std::this_thread::sleep_for(s.wait_before);
  ++counts_.steps;
  if (!shardscaler_->running()) {
    violate("ShardscalerExited",
            "shardscaler exited by itself; its log ends:\n" + shardscaler_->logTail(4000));
    startShardscaler("shardscaler started again after it exited");
  }
  if (s.kind != LagStep::Kind::Kill) {
    scaleTo(s);
    return;
  }
  shardscaler_->kill9();
  ++counts_.kills;
  note("kill -9 shardscaler");
  std::this_thread::sleep_for(s.down_for);
  startShardscaler("shardscaler started again");
}

bool Sequence::converged(std::string* seen) const {
  const Json ss = getOrNull(kShardSets, ns_, "main");
  const Json target = getOrNull(kPrometheuses, ns_, "main");
  auto list = adminClient().list(k8s::resources::statefulSets(), ns_);
  if (!ss.is_object() || !target.is_object() || !list) {
    *seen = "ShardSet, target or StatefulSets unreadable";
    return false;
  }
  const int want = std::clamp(ss["spec"].value("shards", -1), plan_.min_shards, plan_.max_shards);
  // Under Retain every shard ever made and not lost stays: retained when at or above `want`.
  std::set<int> kept_ever;
  std::set<std::string> deleted_uids;
  for (const auto& d : deletionStarts(history_->events())) deleted_uids.insert(d.uid);
  for (const auto& e : history_->events()) {
    const auto index = shardIndexOf(e.object);
    if (index && *index >= 0 && !deleted_uids.contains(metadataText(e.object, "uid"))) {
      kept_ever.insert(*index);
    }
  }
  std::set<int> active, kept, expected_active, expected_kept;
  for (const Json& sts : (*list)["items"]) {
    const auto index = shardIndexOf(sts);
    if (!index || beingDeleted(sts)) continue;
    if (attached(sts)) {
      active.insert(*index);
    } else if (retained(sts)) {
      kept.insert(*index);
    }
  }
  for (int i = 0; i < want; ++i) expected_active.insert(i);
  if (plan_.retain) {
    for (int i : kept_ever) {
      if (i >= want) expected_kept.insert(i);
    }
  }
  const Json status = ss.value("status", Json::object());
  const Json spec = target.value("spec", Json::object());
  const bool paused_by_us = annotationsOf(target).contains("shardscaler.io/paused-by");
  *seen = fmt::format(
      "want {}; target spec {} paused-by {}; ShardSet status.shards {} observedGeneration {} of "
      "{}, {} retained listed; attached {} (want {}), retained {} (want {})",
      want, spec.dump(), paused_by_us, status.value("shards", Json(-1)).dump(),
      status.value("observedGeneration", Json(-1)).dump(),
      ss["metadata"].value("generation", Json(-1)).dump(),
      status.value("retainedShards", Json::array()).size(), setText(active),
      setText(expected_active), setText(kept), setText(expected_kept));
  return spec.value("shards", -1) == want && !spec.value("paused", false) && !paused_by_us &&
         status.value("shards", -1) == want &&
         status.value("observedGeneration", -1) == ss["metadata"].value("generation", -2) &&
         status.value("retainedShards", Json::array()).size() == expected_kept.size() &&
         active == expected_active && kept == expected_kept;
}

void Sequence::waitForConvergence(const std::string& when) {
  const auto from = SteadyClock::now();
  std::string seen;
  if (!test_kit::eventually(
          plan_.converge_timeout, kPoll, [&](std::string* s) { return converged(s); }, &seen)) {
    violate("NotConverged", fmt::format("{}: not converged within {} s; last seen: {}", when,
                                        plan_.converge_timeout.count(), seen));
    return;
  }
  convergence_ = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - from);
  note(fmt::format("converged {} after {:.2f} s", when, convergence_.count() / 1000.0));
}

LagOutcome Sequence::run() {
  LagOutcome out;
  setUp();
  if (violations_.empty()) {
    for (const LagStep& s : plan_.steps) step(s);
    if (!shardscaler_->running()) {
      violate("ShardscalerExited",
              "shardscaler exited by itself; its log ends:\n" + shardscaler_->logTail(4000));
      startShardscaler("shardscaler started again after it exited");
    }
    waitForConvergence("after the last step");
    if (webhook_) checkOperatorDeleteRefused();
    if (violations_.empty()) {
      // Converged must mean settled: nothing moves once there.
      std::this_thread::sleep_for(1s);
      std::string seen;
      if (!converged(&seen)) violate("NotConverged", "converged, then moved again: " + seen);
    }
  }
  evaluate(out);
  return out;
}

void Sequence::evaluate(LagOutcome& out) {
  const auto until = SteadyClock::now();
  proxy_->disableFaults();
  history_->stop();
  const auto events = history_->events();
  const auto starts = deletionStarts(events);
  for (auto& v : checkDeletions(starts, plan_.retain)) violations_.push_back(std::move(v));
  const auto windows = pauseWindows(events, causes_, until);
  for (auto& v : checkPauses(windows, plan_.pause_bound)) violations_.push_back(std::move(v));

  LagCounts& c = counts_;
  c.sequences = 1;
  (plan_.mode == GuardMode::Guarded ? c.guarded : c.fallback) = 1;
  c.faults = proxy_->counts();
  c.deletions_observed = static_cast<int>(starts.size());
  c.pauses = static_cast<int>(windows.size());
  for (const auto& w : windows) {
    auto& longest =
        plan_.mode == GuardMode::Guarded ? c.longest_pause_guarded : c.longest_pause_fallback;
    longest = std::max(longest, w.pastAnchor());
  }
  c.longest_convergence = convergence_;
  for (const auto& a : emulator_->actions()) {
    if (a.kind != "StatefulSet") continue;
    c.guard_denials += a.deniedByWebhook();
    c.guard_unreachable += !a.webhook_failed.empty();
    c.deleted_by_operator += a.verb == "delete" && a.ok();
  }
  std::map<std::string, Json> last;  // by uid: a retained shard labelled back by the operator
  for (const auto& e : events) {
    if (e.kind != HistoryKind::StatefulSet) continue;
    const std::string uid = metadataText(e.object, "uid");
    if (auto it = last.find(uid); it != last.end() && !attached(it->second) &&
                                  retained(it->second) && attached(e.object) &&
                                  retained(e.object)) {
      ++c.operator_relabels;
    }
    last[uid] = e.object;
  }
  std::ifstream log(logs_ / "shardscaler.log");
  for (std::string line; std::getline(log, line);) {
    c.deleted_by_shardscaler += line.find("action=\"delete ") != std::string::npos;
  }
  c.violations = static_cast<int>(violations_.size());
  c.failed = violations_.empty() ? 0 : 1;

  out.counts = c;
  out.violations = violations_;
  out.summary = fmt::format(
      "seed={} {} {} {} lag={}ms target-lag={}ms sync={}+{}ms steps={} kills={} faults={} "
      "denials={} deletions={} longest pause {:.2f}s converged in {:.2f}s: {}",
      plan_.seed, toString(plan_.mode), toString(plan_.identities),
      plan_.retain ? "Retain" : "Delete", plan_.statefulset_lag.count(), plan_.target_lag.count(),
      plan_.sync_latency.count(), plan_.sync_latency_jitter.count(), c.steps, c.kills,
      c.faults.injected(), c.guard_denials, c.deletions_observed,
      std::max(c.longest_pause_guarded, c.longest_pause_fallback).count() / 1000.0,
      convergence_.count() / 1000.0,
      violations_.empty() ? "ok" : std::to_string(violations_.size()) + " VIOLATION(S)");
  if (violations_.empty()) return;
  out.report = "namespace " + ns_ + ", logs in " + logs_.string() + "\nplan: " + plan_.describe() +
               "\nviolations:\n";
  for (const auto& v : violations_) out.report += "  " + v.rule + ": " + v.message + "\n";
  out.report += "timeline:\n";
  for (const auto& line : timeline_) out.report += "  " + line + "\n";
  out.report += lagEvidence({.violations = violations_,
                             .events = events,
                             .operator_actions = emulator_->actions(),
                             .shardscaler_log = logs_ / "shardscaler.log",
                             .started = started_});
}

void Sequence::teardown() {
  try {
    if (webhook_) removeGuardWebhook(webhook_->configuration);  // nothing waits on a stopped guard
    if (shardscaler_ && !shardscaler_->terminate(15s)) note("shardscaler ignored SIGTERM");
    if (emulator_) emulator_->stop();
    if (history_) history_->stop();
    if (proxy_) proxy_->stop();
    for (const auto& object : cluster_rbac_) kubectl("delete " + object + " --ignore-not-found");
    if (!ns_.empty()) {
      // Nothing releases the ShardSet once shardscaler is gone: its finalizer goes by hand.
      kubectl("patch shardset main -n " + ns_ +
              " --type=merge -p '{\"metadata\":{\"finalizers\":null}}'");
      kubectl("delete namespace " + ns_ + " --wait=false");
    }
  } catch (const std::exception& e) {
    std::cerr << "lag sequence " << plan_.seed << ": cleaning up: " << e.what() << "\n";
  }
  webhook_.reset();
  ns_.clear();
}

}  // namespace

LagOutcome runLagSequence(const LagPlan& plan) {
  std::filesystem::path logs;
  LagOutcome out;
  {
    Sequence sequence(plan);
    out = sequence.run();
    logs = sequence.logs();
  }
  if (out.violations.empty() && !logs.empty()) std::filesystem::remove_all(logs);
  return out;
}

}  // namespace shardscaler::e2e
