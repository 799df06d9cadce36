// The shard guard against the real API server: shardscaler (as the ServiceAccount deploy/base's
// RBAC binds, its identity learnt with a TokenReview) serves the webhook on a loopback port, and a
// ValidatingWebhookConfiguration as deploy/webhook renders it, pointed at that port, makes the API
// server ask it. shardscaler creates its certificate Secret and injects the caBundle itself.
//
// Most cases use a second namespace that no shardscaler controller watches: its ShardSet, target
// and shard StatefulSets are built by hand, labelled as shardscaler and the operator label them, so
// nothing but the guard acts there. (Active shards carry shardscaler.io/shardset once the
// controller labels them; until then only this setup does.) Users: user-1 (plain, may delete and
// patch StatefulSets), user-2 (the operator emulator, a plain user with the operator's rights).
// The test control plane's garbage collector and namespace controller run as their own
// ServiceAccounts (--use-service-account-credentials, as kubeadm runs them), which are the guard's
// default cleanup identities.
#include <gmock/gmock.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "shardscaler/e2e/deploy_rbac.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/hand_built_shards.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/guard/shard_guard.h"
#include "shardscaler/k8s_meta/time.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const k8s::Resource kWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                           "validatingwebhookconfigurations", false};
// deploy/rbac's ClusterRole names the default webhook configuration.
constexpr const char* kWebhookConfiguration = "shardscaler-guard";
constexpr const char* kGuardedLabel = "e2e.shardscaler.io/guarded-by";

std::string shardName(int index) { return handBuiltShardName(index); }

// Rights of a plain user on StatefulSets.
std::string userRoles(const std::string& ns) {
  return "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: guard-e2e-user, "
         "namespace: " +
         ns +
         "}\nrules:\n- {apiGroups: [apps], resources: [statefulsets], verbs: [get, list, "
         "delete, patch, update]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: "
         "RoleBinding\nmetadata: {name: guard-e2e-user, namespace: " +
         ns +
         "}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: guard-e2e-user}\n"
         "subjects: [{kind: User, name: user-1, apiGroup: rbac.authorization.k8s.io}]\n";
}

void buildByHand(const std::string& ns, int shards) { buildTargetByHand(ns, shards); }
Json shardStatefulSet(const std::string& ns, int index) { return handBuiltShard(ns, index); }

::testing::AssertionResult waitGone(const std::string& ns, const std::string& name,
                                    std::chrono::seconds timeout = 60s) {
  std::string last;
  if (test_kit::eventually(
          timeout, kPoll,
          [&](std::string* seen) {
            const Json sts = getOrNull(k8s::resources::statefulSets(), ns, name);
            *seen = sts.is_null() ? "gone" : sts["metadata"].dump();
            return sts.is_null();
          },
          &last)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "timed out after " << timeout.count() << "s waiting for StatefulSet " << ns << "/"
         << name << " gone; last seen: " << last;
}

// Labels the namespace for the test's webhook configuration and grants the users their roles.
void prepareNamespace(const std::string& ns, const std::string& guarded_by) {
  auto r =
      kubectl("label namespace " + ns + " " + kGuardedLabel + "=" + guarded_by + " --overwrite");
  if (r.exit_code != 0) throw std::runtime_error("label namespace: " + r.err);
  apply(userRoles(ns));
  grantOperatorRole(ns, "user-2");  // the emulator, a plain user with the operator's rights
}

// deploy/webhook's configuration, calling the guard at https://127.0.0.1:<port>, for the
// namespaces labelled guarded-by=<guarded_by>. Without a ca_bundle (base64) it waits for
// shardscaler's injection.
void installWebhookConfiguration(int port, const std::string& guarded_by,
                                 const std::string& ca_bundle = {}) {
  auto rendered = kubectl("kustomize " + (sourceDir() / "deploy/webhook").string());
  if (rendered.exit_code != 0) throw std::runtime_error("kubectl kustomize: " + rendered.err);
  Json vwc;
  for (Json& o : deploy_test::yamlStreamToJson(rendered.out)) {
    if (o.value("kind", "") == "ValidatingWebhookConfiguration") vwc = std::move(o);
  }
  const std::string url =
      "https://127.0.0.1:" + std::to_string(port) + std::string(guard::kGuardPath);
  for (Json& hook : vwc["webhooks"]) {
    hook["clientConfig"] = {{"url", url}};
    if (!ca_bundle.empty()) hook["clientConfig"]["caBundle"] = ca_bundle;
    hook["namespaceSelector"] = {{"matchLabels", {{kGuardedLabel, guarded_by}}}};
  }
  adminClient().remove(kWebhookConfigurations, "", kWebhookConfiguration);  // a failed run's
  auto created = adminClient().create(kWebhookConfigurations, "", vwc);
  if (!created) throw std::runtime_error("create webhook: " + created.error().describe());
}

// Until the API server calls the guard: its webhook informer has the configuration, with a
// caBundle that verifies. A server-side dry run of deleting a probe StatefulSet (labelled for a
// ShardSet that does not exist: always allowed) must reach shardscaler.
::testing::AssertionResult waitUntilCalled(const ShardscalerProcess& p, const std::string& ns) {
  Json probe = shardStatefulSet(ns, 0);  // the namespace may have no target: no owner
  probe["metadata"]["name"] = "guard-probe";
  probe["metadata"]["labels"] = {{"shardscaler.io/shardset", "guard-probe"}};
  probe["metadata"].erase("ownerReferences");
  if (getOrNull(k8s::resources::statefulSets(), ns, "guard-probe").is_null()) {
    auto created = adminClient().create(k8s::resources::statefulSets(), ns, probe);
    if (!created) return ::testing::AssertionFailure() << created.error().describe();
  }
  std::string last;
  const bool called = test_kit::eventually(
      60s, kPoll,
      [&](std::string* seen) {
        const double before = guardDeleteReviews(p);
        auto r = kubectl("delete statefulset guard-probe -n " + ns + " --dry-run=server");
        *seen = "kubectl: " + std::to_string(r.exit_code) + " " + r.err;
        return guardDeleteReviews(p) > before;
      },
      &last);
  if (called) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the API server never called the guard; last: " << last;
}

class GuardScenario : public ShardSetScenario {
 protected:
  // The first hook SetUp calls (ns_ exists): the other namespace, the users, the port.
  std::filesystem::path emulatorKubeconfig() override {
    port_ = testenv::pickFreePort();
    other_ns_ = createNamespace("guard-hand");
    for (const auto& ns : {ns_, other_ns_}) prepareNamespace(ns, ns_);
    user_kubeconfig_ = cluster().writeKubeconfig("user-1-" + ns_, cluster().userToken(1));
    operator_kubeconfig_ = cluster().writeKubeconfig("user-2-" + ns_, cluster().userToken(2));
    return operator_kubeconfig_;
  }

  // deploy/base's RBAC and ServiceAccount, and the webhook configuration (from deploy/webhook),
  // before shardscaler starts.
  std::filesystem::path shardscalerKubeconfig() override {
    apply(yamlStream(renderedRbac(ns_)));
    auto kubeconfig =
        cluster().writeKubeconfig("shardscaler-" + ns_, serviceAccountToken(ns_, "shardscaler"));
    installWebhookConfiguration(port_, ns_);
    return kubeconfig;
  }

  std::vector<std::string> shardscalerArgs() const override {
    std::vector<std::string> args = {
        "--webhook-bind-address=127.0.0.1:" + std::to_string(port_),
        "--webhook-cert-secret=" + ns_ + "/shardscaler-webhook-cert",
        "--webhook-hosts=127.0.0.1",
    };
    for (auto& a : guardArgs()) args.push_back(std::move(a));
    return args;
  }
  virtual std::vector<std::string> guardArgs() const { return {}; }

  void SetUp() override {
    ShardSetScenario::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(waitFor(
        "the guard enforced (caBundle injected) and shardscaler ready", [&](std::string* seen) {
          const auto status =
              guard::readGuardStatus(adminClient(), kWebhookConfiguration, other_ns_);
          const auto ready = shardscaler_->httpGet(shardscaler_->probePort(), "/readyz");
          *seen = status.reason + "; /readyz " + std::to_string(ready.first) + " " + ready.second;
          return status.enforced && ready.first == 200;
        }));
    for (const auto& ns : {ns_, other_ns_}) ASSERT_TRUE(waitUntilCalled(*shardscaler_, ns));
    allowed_deletes_ = metric(kReviews, kAllowedDeletes);
  }

  void TearDown() override {
    // First, so that no later deletion in these namespaces waits on a stopped guard.
    adminClient().remove(kWebhookConfigurations, "", kWebhookConfiguration);
    ShardSetScenario::TearDown();
  }

  // kubectl as user-1; {exit code, stderr}.
  KubectlResult asUser(const std::string& args) {
    return kubectl("--kubeconfig=" + user_kubeconfig_.string() + " " + args);
  }

  // A counter of shardscaler's /metrics, 0 when the series is absent.
  double metric(std::string_view name, std::string_view labels) const {
    return metricSum(*shardscaler_, name, labels).value_or(0);
  }

  static constexpr std::string_view kReviews = "shardscaler_guard_reviews_total";
  static constexpr std::string_view kDenials = "shardscaler_guard_denials_total";
  static constexpr std::string_view kAllowedDeletes = R"(operation="DELETE",result="allowed")";
  static constexpr std::string_view kAllowedUpdates = R"(operation="UPDATE",result="allowed")";
  double allowed_deletes_ = 0;  // after the probes of SetUp
  int port_ = 0;
  std::string other_ns_;
  std::filesystem::path user_kubeconfig_;
  std::filesystem::path operator_kubeconfig_;
};

class GuardTest : public GuardScenario {};

TEST_F(GuardTest, DeletingAnActiveShardIsRefusedAndTheMessageSaysWhy) {
  buildByHand(other_ns_, 2);
  for (int i : {0, 1, 2}) createActiveShard(other_ns_, i);  // 2 is one beyond the count

  auto refused = asUser("delete statefulset " + shardName(1) + " -n " + other_ns_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err,
              HasSubstr("admission webhook \"delete.guard.shardscaler.io\" denied the request: "
                        "shardscaler guard: rule ActiveShard: StatefulSet " +
                        other_ns_ +
                        "/prometheus-main-shard-1 (shard 1 of Prometheus main) is an "
                        "active shard of ShardSet main (Prometheus main runs 2 shards, the "
                        "ShardSet wants 2); deleting it would lose the data it holds."));
  EXPECT_THAT(refused.err, HasSubstr("To override, act as a member of group system:masters"));
  EXPECT_TRUE(intact(other_ns_, shardName(1)));

  // A dry run is judged the same, and deletes nothing either.
  auto dry =
      asUser("delete statefulset " + shardName(0) + " -n " + other_ns_ + " --dry-run=server");
  EXPECT_NE(dry.exit_code, 0);
  EXPECT_THAT(dry.err, HasSubstr("rule ActiveShard: StatefulSet " + other_ns_ +
                                 "/prometheus-main (shard 0 of Prometheus main)"));
  EXPECT_TRUE(intact(other_ns_, shardName(0)));

  // Beyond the shard count, under whenScaled=Retain, shardscaler detaches a shard and keeps it:
  // nobody else deletes it.
  auto retained = asUser("delete statefulset " + shardName(2) + " -n " + other_ns_);
  EXPECT_NE(retained.exit_code, 0);
  EXPECT_THAT(retained.err, HasSubstr("rule RetainOnScaleDown: StatefulSet " + other_ns_ +
                                      "/prometheus-main-shard-2 (shard 2 of Prometheus main) is "
                                      "beyond the shard count, but ShardSet main retains "
                                      "scaled-away shards (whenScaled=Retain, from ShardSet)"));
  EXPECT_TRUE(intact(other_ns_, shardName(2)));

  // Under whenScaled=Delete without a drain (an opt-out: by default shardscaler drains removed
  // shards before it deletes them) it is the operator's (or anyone's) to delete.
  auto policy = kubectl("patch shardset main -n " + other_ns_ +
                        " --type=merge -p '{\"spec\":{\"shardRetentionPolicy\":"
                        "{\"whenScaled\":\"Delete\",\"drain\":{\"enabled\":false}}}}'");
  ASSERT_EQ(policy.exit_code, 0) << policy.err;
  auto excess = asUser("delete statefulset " + shardName(2) + " -n " + other_ns_);
  EXPECT_EQ(excess.exit_code, 0) << excess.err;

  EXPECT_EQ(metric(kDenials, R"(rule="ActiveShard")"), 2);
  EXPECT_EQ(metric(kDenials, R"(rule="RetainOnScaleDown")"), 1);
  EXPECT_EQ(metric(kReviews, kAllowedDeletes) - allowed_deletes_, 1);
  const std::string log = shardscaler_->logTail(std::size_t{64} * 1024);
  EXPECT_THAT(log, HasSubstr("shard guard denied a request"));
  EXPECT_THAT(log, HasSubstr("rule=ActiveShard"));
  EXPECT_THAT(log, HasSubstr("user=user-1"));
  EXPECT_THAT(log, HasSubstr("shard guard: shardscaler's own user user=system:serviceaccount:" +
                             ns_ + ":shardscaler source=TokenReview"));
}

TEST_F(GuardTest, RetainedShardIsRefusedBeforeItsDeadlineAndAllowedAfter) {
  buildByHand(other_ns_, 2);
  const auto deadline = std::chrono::system_clock::now() + 8s;
  createRetainedShard(other_ns_, 3, k8s::formatTime(deadline));
  createRetainedShard(other_ns_, 4, "0001-01-01T00:00:00Z");

  auto refused = asUser("delete statefulset " + shardName(3) + " -n " + other_ns_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("rule RetainedBeforeDeadline: StatefulSet " + other_ns_ +
                                     "/prometheus-main-shard-3 (shard 3 of Prometheus main) is "
                                     "retained by ShardSet main until " +
                                     k8s::formatTime(deadline) +
                                     "; shardscaler deletes it once that "
                                     "passes."));
  auto never = asUser("delete statefulset " + shardName(4) + " -n " + other_ns_);
  EXPECT_THAT(never.err, HasSubstr("with no deadline (0001-01-01T00:00:00Z means never)"));
  EXPECT_TRUE(intact(other_ns_, shardName(3)));

  // Strictly after the deadline (whole seconds), the shard is due: refused still while its data
  // is not found shipped (the drain is on by default, and nothing drains it here), ...
  std::this_thread::sleep_until(deadline + 1100ms);
  auto undrained = asUser("delete statefulset " + shardName(3) + " -n " + other_ns_);
  EXPECT_NE(undrained.exit_code, 0);
  EXPECT_THAT(undrained.err, HasSubstr("rule NotDrained: StatefulSet " + other_ns_ +
                                       "/prometheus-main-shard-3 (shard 3 of Prometheus main) is "
                                       "due, but ShardSet main has not found its data shipped"));
  // ... and the same delete goes through once the ShardSet opts out of the drain.
  auto opt_out = kubectl("patch shardset main -n " + other_ns_ +
                         " --type=merge -p '{\"spec\":{\"shardRetentionPolicy\":"
                         "{\"drain\":{\"enabled\":false}}}}'");
  ASSERT_EQ(opt_out.exit_code, 0) << opt_out.err;
  std::string refusal;
  EXPECT_TRUE(test_kit::eventually(
      30s, kPoll,
      [&](std::string* seen) {
        auto allowed = asUser("delete statefulset " + shardName(3) + " -n " + other_ns_);
        *seen = allowed.err;
        return allowed.exit_code == 0;
      },
      &refusal))
      << refusal;
  EXPECT_TRUE(waitGone(other_ns_, shardName(3)));
  EXPECT_TRUE(intact(other_ns_, shardName(4)));
}

TEST_F(GuardTest, MembersOfSystemMastersMayDeleteAnyShard) {
  buildByHand(other_ns_, 2);
  createActiveShard(other_ns_, 0);
  createRetainedShard(other_ns_, 3, "0001-01-01T00:00:00Z");
  for (int i : {0, 3}) {
    auto r = kubectl("delete statefulset " + shardName(i) + " -n " + other_ns_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(waitGone(other_ns_, shardName(i)));
  }
}

// StatefulSets no ShardSet manages never reach the guard. Updates of managed ones do (an active
// shard's index or labels changed by hand would let a later DELETE through), and those that leave
// what the rules read alone pass, unread.
TEST_F(GuardTest, UnmanagedStatefulSetsNeverReachTheGuardAndPlainUpdatesPassIt) {
  buildByHand(other_ns_, 2);
  createActiveShard(other_ns_, 1);
  Json plain = shardStatefulSet(other_ns_, 7);
  plain["metadata"]["name"] = "web";
  plain["metadata"]["labels"] = {{"app", "web"}};
  plain["metadata"].erase("ownerReferences");
  ASSERT_TRUE(adminClient().create(k8s::resources::statefulSets(), other_ns_, plain));
  const double deletes_before = metric(kReviews, kAllowedDeletes);
  const double updates_before = metric(kReviews, kAllowedUpdates);

  auto relabel_plain = asUser("label statefulset web -n " + other_ns_ + " team=a");
  EXPECT_EQ(relabel_plain.exit_code, 0) << relabel_plain.err;
  auto removed = asUser("delete statefulset web -n " + other_ns_);
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_TRUE(waitGone(other_ns_, "web"));
  EXPECT_EQ(metric(kReviews, kAllowedDeletes), deletes_before)
      << "the objectSelector should keep this DELETE away from the webhook";
  EXPECT_EQ(metric(kReviews, kAllowedUpdates), updates_before)
      << "the objectSelector should keep this UPDATE away from the webhook";

  auto relabel = asUser("label statefulset " + shardName(1) + " -n " + other_ns_ + " team=a");
  EXPECT_EQ(relabel.exit_code, 0) << relabel.err;
  auto scaled = asUser("patch statefulset " + shardName(1) + " -n " + other_ns_ +
                       " --type=merge -p '{\"spec\":{\"replicas\":1}}'");
  EXPECT_EQ(scaled.exit_code, 0) << scaled.err;
  EXPECT_EQ(metric(kReviews, kAllowedUpdates), updates_before + 2);
}

// The operator's ordinary updates of active shards (a changed target spec: updateStatefulSet with
// mergeMetadata), as plain user-2 through the UPDATE webhook: they pass, and the shards stay.
TEST_F(GuardTest, TheOperatorsUpdatesOfActiveShardsPass) {
  createPrometheus(2);
  applyShardSet({.shards = 2, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(2, 0));
  const double updates_before = metric(kReviews, kAllowedUpdates);
  const size_t writes_before = emulatorStatefulSetWrites("update").size();
  auto changed = kubectl("patch prometheus main -n " + ns_ +
                         " --type=merge -p '{\"spec\":{\"retention\":\"2d\"}}'");
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  // The updates since the change: both shards updated, none refused.
  const auto since = [&] {
    auto updates = emulatorStatefulSetWrites("update");
    updates.erase(updates.begin(), updates.begin() + static_cast<std::ptrdiff_t>(writes_before));
    return updates;
  };
  ASSERT_TRUE(waitFor("the emulator's updates of both shards", [&](std::string* seen) {
    const auto updates = since();
    int ok = 0;
    for (const auto& a : updates) ok += a.ok() ? 1 : 0;
    *seen = std::to_string(updates.size()) + " updates, " + std::to_string(ok) + " ok";
    for (const auto& a : updates) {
      if (!a.ok()) *seen += "; refused: " + a.outcome;
    }
    return ok >= 2;
  }));
  for (const auto& a : since()) EXPECT_TRUE(a.ok()) << a.name << ": " << a.outcome;
  EXPECT_GE(metric(kReviews, kAllowedUpdates), updates_before + 2);
  EXPECT_EQ(metric(kDenials, R"(rule="GuardedMetadata")"), 0);
  EXPECT_TRUE(waitForSettled(2, 0));
}

// The operator's view lags: it does not see that shard 1 was detached, so it creates it again and,
// on AlreadyExists, patches its labels back (CreateStatefulSetOrPatchLabels). The emulator does
// exactly that, as plain user-2; the guard refuses the patch.
TEST_F(GuardTest, TheOperatorCannotRelabelARetainedShard) {
  const std::string ns = createNamespace("guard-emulated");
  prepareNamespace(ns, ns_);
  testenv::OperatorEmulatorOptions options;
  options.kubeconfig = operator_kubeconfig_;
  options.namespaces = {ns};
  options.work_dir = testLogDir() / "emulator-relabel";
  std::filesystem::create_directories(options.work_dir);
  testenv::OperatorEmulator emulator(options);

  buildByHand(ns, 2);
  ASSERT_TRUE(waitFor("the emulator's two shards", [&](std::string* seen) {
    const bool both = intact(ns, shardName(0)) && intact(ns, shardName(1));
    *seen = both ? "both" : "not yet";
    return both;
  }));
  auto labelled = kubectl("label statefulset -n " + ns +
                          " -l operator.prometheus.io/name=main shardscaler.io/shardset=main");
  ASSERT_EQ(labelled.exit_code, 0) << labelled.err;
  // Detach shard 1 as shardscaler does (a merge patch by an exempt user), then lower the count.
  const std::string deadline = k8s::formatTime(std::chrono::system_clock::now() + 1h);
  auto detached = kubectl(
      "patch statefulset " + shardName(1) + " -n " + ns + " --type=merge -p '" +
      Json{{"metadata",
            {{"labels",
              {{"operator.prometheus.io/name", nullptr}, {"shardscaler.io/retained", "true"}}},
             {"annotations", {{"operator.prometheus.io/deletion-timestamp", deadline}}}}}}
          .dump() +
      "'");
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  auto lowered =
      kubectl("patch prometheus main -n " + ns + " --type=merge -p '{\"spec\":{\"shards\":1}}'");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
  std::this_thread::sleep_for(1s);  // the emulator sees 1 shard before it sees 2 again
  auto raised =
      kubectl("patch prometheus main -n " + ns + " --type=merge -p '{\"spec\":{\"shards\":2}}'");
  ASSERT_EQ(raised.exit_code, 0) << raised.err;

  std::string outcome;
  ASSERT_TRUE(waitFor("the emulator's refused label patch", [&](std::string* seen) {
    for (const auto& a : testenv::readActionLog(emulator.actionLogPath())) {
      if (a.kind == "StatefulSet" && a.verb == "patch" && a.name == shardName(1) && !a.ok()) {
        outcome = a.outcome;
        return true;
      }
    }
    *seen = "no refused patch of " + shardName(1) + " in " + emulator.actionLogPath().string();
    return false;
  }));
  EXPECT_THAT(outcome, HasSubstr("admission webhook \"retained.guard.shardscaler.io\" denied the "
                                 "request: shardscaler guard: rule Reattach: this UPDATE puts "
                                 "operator.prometheus.io/name back on StatefulSet " +
                                 ns +
                                 "/prometheus-main-shard-1 (shard 1 of Prometheus main), "
                                 "which is retained by ShardSet main until " +
                                 deadline));
  const Json shard = getOrNull(k8s::resources::statefulSets(), ns, shardName(1));
  ASSERT_TRUE(shard.is_object());
  EXPECT_FALSE(shard["metadata"]["labels"].contains("operator.prometheus.io/name"))
      << "the retained shard was re-attached: " << shard["metadata"].dump();
  emulator.stop();
  EXPECT_GE(metric(kDenials, R"(rule="Reattach")"), 1);
}

// The controller's own shards (shardscaler.io labels written by shardscaler), active and retained,
// refused for the plain user while shardscaler's own writes go through the guard unhindered.
TEST_F(GuardTest, ShardRetainedByTheControllerIsProtected) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 1));
  // The active shards carry the guard label the controller wrote: refused too.
  auto active = asUser("delete statefulset " + shardName(1) + " -n " + ns_);
  EXPECT_NE(active.exit_code, 0);
  EXPECT_THAT(active.err, HasSubstr("rule ActiveShard: StatefulSet " + ns_ +
                                    "/prometheus-main-shard-1 (shard 1 of Prometheus main) is an "
                                    "active shard of ShardSet main"));
  EXPECT_TRUE(intact(ns_, shardName(1)));
  auto refused = asUser("delete statefulset " + shardName(2) + " -n " + ns_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("rule RetainedBeforeDeadline: StatefulSet " + ns_ +
                                     "/prometheus-main-shard-2 (shard 2 of Prometheus main) is "
                                     "retained by ShardSet main until "));
  // Scaling back up re-attaches it: shardscaler is exempt.
  scaleWithKubectl(3);
  ASSERT_TRUE(waitForSettled(3, 0));
}

// Someone scales the claimed Prometheus itself (its own scale subresource) from 3 to 1: the
// operator's deletions of shards 1 and 2 are refused, as those are still active shards of the
// ShardSet, and shardscaler puts spec.shards back. No shard is lost.
TEST_F(GuardTest, ScalingTheClaimedTargetDirectlyLosesNothing) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));
  const auto uids = statefulSetUids();
  auto scaled = kubectl("scale prometheus/main -n " + ns_ + " --replicas=1");
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  ASSERT_TRUE(waitFor("the operator to act on spec.shards=1 (a refused deletion)",
                      [&](std::string*) { return metric(kDenials, "") > 0; }));
  ASSERT_TRUE(waitForSettled(3, 0, 90s));
  EXPECT_EQ(statefulSetUids(), uids) << "a shard was deleted or replaced";
}

// Without exempt groups: admin's own deletes are judged like anyone's, but the garbage collector
// and the namespace controller (the default cleanup identities) clean up behind a deleted target
// or namespace.
class GuardCleanupTest : public GuardScenario {
 protected:
  std::vector<std::string> guardArgs() const override { return {"--guard-exempt-groups="}; }
};

TEST_F(GuardCleanupTest, DeletingTheTargetIsNotBlocked) {
  buildByHand(other_ns_, 2);
  createActiveShard(other_ns_, 0);
  createActiveShard(other_ns_, 1);
  createRetainedShard(other_ns_, 3, "0001-01-01T00:00:00Z");
  auto refused = kubectl("delete statefulset " + shardName(0) + " -n " + other_ns_);
  EXPECT_NE(refused.exit_code, 0) << "admin is not exempt in this configuration";
  EXPECT_THAT(refused.err, HasSubstr("rule ActiveShard"));

  auto deleted = kubectl("delete prometheus main -n " + other_ns_ + " --wait=false");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  for (int i : {0, 1, 3}) EXPECT_TRUE(waitGone(other_ns_, shardName(i), 90s));
}

// The target webhook: admin is not exempt here, so its writes of a claimed target's spec.shards
// are judged like an HPA's or a GitOps tool's. Nothing reaches the operator.
TEST_F(GuardCleanupTest, ChangingAClaimedTargetsShardCountIsRefusedWithTheWayToScale) {
  buildByHand(other_ns_, 2);
  const std::string target = "prometheus/main -n " + other_ns_;
  // Unclaimed, the target is anyone's to scale.
  auto unclaimed = kubectl("scale " + target + " --replicas=3");
  ASSERT_EQ(unclaimed.exit_code, 0) << unclaimed.err;
  auto claim = kubectl("annotate " + target + " shardscaler.io/claimed-by=main");
  ASSERT_EQ(claim.exit_code, 0) << claim.err;

  auto scaled = kubectl("scale " + target + " --replicas=1");
  EXPECT_NE(scaled.exit_code, 0);
  EXPECT_THAT(scaled.err,
              HasSubstr("admission webhook \"target.guard.shardscaler.io\" denied the request: "
                        "shardscaler guard: rule ShardCountOwnedByShardSet: this UPDATE changes "
                        "the shard count of Prometheus main from 3 to 1, which ShardSet main "
                        "sets"));
  EXPECT_THAT(scaled.err,
              HasSubstr("kubectl scale shardset/main -n " + other_ns_ + " --replicas=1"));
  auto applied = kubectl("patch " + target + " --type=merge -p '{\"spec\":{\"shards\":2}}'");
  EXPECT_NE(applied.exit_code, 0);
  EXPECT_THAT(applied.err, HasSubstr("rule ShardCountOwnedByShardSet"));
  EXPECT_EQ(getOrNull(kPrometheuses, other_ns_, "main")["spec"].value("shards", 0), 3);

  // What keeps the count passes: the operator's and everyone's ordinary edits.
  auto edited = kubectl("patch " + target + " --type=merge -p '{\"spec\":{\"retention\":\"9d\"}}'");
  EXPECT_EQ(edited.exit_code, 0) << edited.err;
  // At least one review per refused write (the API server may call the webhook more than once
  // for one PATCH).
  EXPECT_GE(metric(kDenials, R"(rule="ShardCountOwnedByShardSet")"), 2);

  // Once the ShardSet is gone, its left-over claim refuses nothing.
  auto gone = kubectl("delete shardset main -n " + other_ns_ + " --wait=false");
  ASSERT_EQ(gone.exit_code, 0) << gone.err;
  ASSERT_TRUE(waitFor("ShardSet main gone", [&](std::string* seen) {
    const Json ss = getOrNull(kShardSets, other_ns_, "main");
    *seen = ss.is_null() ? "gone" : ss["metadata"].dump();
    return ss.is_null();
  }));
  auto released = kubectl("scale " + target + " --replicas=1");
  EXPECT_EQ(released.exit_code, 0) << released.err;
}

TEST_F(GuardCleanupTest, DeletingTheNamespaceIsNotBlocked) {
  const std::string ns = createNamespace("guard-doomed");
  prepareNamespace(ns, ns_);
  buildByHand(ns, 2);
  // The ShardSet outlives its shards, as shardscaler's release finalizer makes it (no controller
  // watches this namespace to remove it): the shards are deleted while their ShardSet exists.
  auto held = kubectl("patch shardset main -n " + ns +
                      " --type=merge -p '{\"metadata\":{\"finalizers\":[\"shardscaler.io/"
                      "release-target\"]}}'");
  ASSERT_EQ(held.exit_code, 0) << held.err;
  Json active = shardStatefulSet(ns, 1);
  active["metadata"].erase("ownerReferences");  // only the namespace's deletion removes it
  ASSERT_TRUE(adminClient().create(k8s::resources::statefulSets(), ns, active));
  createRetainedShard(ns, 3, "0001-01-01T00:00:00Z");
  ASSERT_NE(kubectl("delete statefulset " + shardName(1) + " -n " + ns).exit_code, 0);

  auto deleted = kubectl("delete namespace " + ns + " --wait=false");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  for (int i : {1, 3}) EXPECT_TRUE(waitGone(ns, shardName(i), 120s));
  EXPECT_TRUE(getOrNull(kShardSets, ns, "main").is_object())
      << "the ShardSet went first: the shards were released, not cleaned up";
  auto released = kubectl("patch shardset main -n " + ns +
                          " --type=merge -p '{\"metadata\":{\"finalizers\":null}}'");
  ASSERT_EQ(released.exit_code, 0) << released.err;
  EXPECT_TRUE(waitFor(
      "namespace " + ns + " gone",
      [&](std::string* seen) {
        const Json n = getOrNull(k8s::resources::namespaces(), "", ns);
        *seen = n.is_null() ? "gone" : n.value("status", Json()).dump();
        return n.is_null();
      },
      120s));
}

// A ShardSet deleted with --cascade=foreground (as Argo CD prunes by default): the garbage
// collector deletes the ShardSet's dependents, its retained shards (a detach makes the ShardSet
// their owner), while the release finalizer has not run. Here no replica leads (a failover
// window: a replica serves the guard but holds no Lease), so no finalizer runs at all: the guard
// must refuse every such deletion, with the target present or gone. Once a replica leads, its
// finalizer orphans each retained shard, names it in a RetainedShardsOrphaned Event, and the
// ShardSet goes; nothing was deleted.
class GuardForegroundDeletionTest : public GuardScenario {
 protected:
  // The retained shards 1 and 2 of a ShardSet scaled from 3 to 1 survive its foreground deletion.
  void deleteInTheForegroundWithoutALeader(bool target_gone);

  // Replaces shardscaler by a replica that serves the guard but does not lead: the Lease is held
  // by another identity for an hour.
  void startAReplicaThatDoesNotLead() {
    const std::string renewed = k8s::formatMicroTime(std::chrono::system_clock::now());
    apply(
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: shardscaler, "
        "namespace: " +
        ns_ + "}\nspec: {holderIdentity: elsewhere, leaseDurationSeconds: 3600, acquireTime: \"" +
        renewed + "\", renewTime: \"" + renewed + "\"}\n");
    shardscaler_.reset();
    ShardscalerOptions options;
    options.kubeconfig =
        cluster().writeKubeconfig("shardscaler-" + ns_, serviceAccountToken(ns_, "shardscaler"));
    options.namespaces = {ns_};
    options.extra_args = shardscalerArgs();
    options.extra_args.insert(
        options.extra_args.end(),
        {"--leader-elect=true", "--leader-election-namespace=" + ns_, "--identity=standby"});
    options.log_file = testLogDir() / "shardscaler-standby.log";
    shardscaler_ = std::make_unique<ShardscalerProcess>(options);
    ASSERT_TRUE(waitFor("the standby ready", [&](std::string* seen) {
      const auto ready = shardscaler_->httpGet(shardscaler_->probePort(), "/readyz");
      *seen = std::to_string(ready.first) + " " + ready.second;
      return ready.first == 200;
    }));
    ASSERT_TRUE(waitUntilCalled(*shardscaler_, ns_));
    ASSERT_EQ(metricSum(*shardscaler_, "shardscaler_leader").value_or(-1), 0);
  }
};

void GuardForegroundDeletionTest::deleteInTheForegroundWithoutALeader(bool target_gone) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));
  scaleWithKubectl(1);
  ASSERT_TRUE(waitForSettled(1, 2));
  const std::string shard_set_uid = shardSet()["metadata"]["uid"];
  std::map<std::string, std::string> retained;  // name -> uid
  for (int i : {1, 2}) {
    const Json sts = getOrNull(k8s::resources::statefulSets(), ns_, shardName(i));
    ASSERT_TRUE(sts.is_object());
    ASSERT_EQ(sts["metadata"]["ownerReferences"][0].value("uid", ""), shard_set_uid)
        << "a detach makes the ShardSet the retained shard's owner: " << sts["metadata"].dump();
    retained[shardName(i)] = sts["metadata"]["uid"];
  }
  if (target_gone) {
    auto deleted = kubectl("delete prometheus main -n " + ns_ + " --wait=false");
    ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
    ASSERT_TRUE(waitGone(ns_, shardName(0), 90s)) << "the attached shard goes with its target";
  }
  ASSERT_NO_FATAL_FAILURE(startAReplicaThatDoesNotLead());
  // A dependent that blocks the ShardSet's deletion, held by a finalizer of the test's: the
  // collector keeps the foreground deletion open, and so keeps trying the retained shards, until
  // the test lets it go. Without it the collector's attempts on them race its own removal of the
  // foregroundDeletion finalizer (no retained shard blocks: a detach sets no blockOwnerDeletion).
  const Json holder{{"apiVersion", "v1"},
                    {"kind", "Secret"},
                    {"metadata",
                     {{"name", "hold-foreground-deletion"},
                      {"finalizers", {"e2e.shardscaler.io/hold"}},
                      {"ownerReferences",
                       {{{"apiVersion", "shardscaler.io/v1alpha1"},
                         {"kind", "ShardSet"},
                         {"name", "main"},
                         {"uid", shard_set_uid},
                         {"blockOwnerDeletion", true}}}}}}};
  ASSERT_TRUE(adminClient().create(k8s::resources::secrets(), ns_, holder));

  auto deleted = kubectl("delete shardset main -n " + ns_ + " --cascade=foreground --wait=false");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  // The collector, as its own ServiceAccount, has tried each retained shard: refused, or deleted.
  const std::string collector = "user=system:serviceaccount:kube-system:generic-garbage-collector";
  ASSERT_TRUE(waitFor(
      "the garbage collector's attempts on both retained shards",
      [&](std::string* seen) {
        const std::string log = shardscaler_->logTail(std::size_t{1} << 20);
        seen->clear();
        bool all = true;
        for (const auto& [name, uid] : retained) {
          bool refused = false;
          std::istringstream lines(log);
          for (std::string line; std::getline(lines, line);) {
            refused = refused || (line.find("shard guard denied a request") != std::string::npos &&
                                  line.find("statefulset=" + name + " ") != std::string::npos &&
                                  line.find(collector) != std::string::npos);
          }
          const bool taken = !intact(ns_, name);
          *seen += name + (refused ? " refused" : taken ? " deleted" : " not tried yet") + "; ";
          all = all && (refused || taken);
        }
        return all;
      },
      120s));
  // Let the foreground deletion end: the collector drops its finalizer from the ShardSet.
  auto released = kubectl("patch secret hold-foreground-deletion -n " + ns_ +
                          " --type=merge -p '{\"metadata\":{\"finalizers\":null}}'");
  ASSERT_EQ(released.exit_code, 0) << released.err;
  ASSERT_TRUE(waitFor(
      "the collector done with the ShardSet",
      [&](std::string* seen) {
        const Json finalizers = shardSet()["metadata"].value("finalizers", Json::array());
        *seen = finalizers.dump();
        return std::ranges::find(finalizers, Json("foregroundDeletion")) == finalizers.end();
      },
      120s));
  for (const auto& [name, uid] : retained) {
    const Json sts = getOrNull(k8s::resources::statefulSets(), ns_, name);
    ASSERT_TRUE(sts.is_object() && sts["metadata"].value("uid", "") == uid)
        << name << " was deleted";
    EXPECT_FALSE(sts["metadata"].contains("deletionTimestamp")) << name << " is being deleted";
  }
  EXPECT_GE(metric(kDenials, R"(rule="RetainedByShardSet",requester="controller")"), 2);
  ASSERT_TRUE(shardSet().is_object()) << "no finalizer ran, the ShardSet must still be there";

  // A replica leads: the finalizer orphans the retained shards, and the ShardSet goes.
  auto lease = kubectl("delete lease shardscaler -n " + ns_);
  ASSERT_EQ(lease.exit_code, 0) << lease.err;
  ASSERT_TRUE(waitFor(
      "ShardSet main released and gone",
      [&](std::string* seen) {
        const Json ss = shardSet();
        *seen = ss.is_null() ? "gone" : ss["metadata"].dump();
        return ss.is_null();
      },
      90s));
  for (const auto& [name, uid] : retained) {
    const Json sts = getOrNull(k8s::resources::statefulSets(), ns_, name);
    ASSERT_TRUE(sts.is_object() && sts["metadata"].value("uid", "") == uid)
        << name << " was deleted";
    EXPECT_TRUE(sts["metadata"].value("ownerReferences", Json::array()).empty())
        << name << " keeps an owner the garbage collector could follow: " << sts["metadata"].dump();
  }
  std::string orphaned;
  ASSERT_TRUE(waitFor("a RetainedShardsOrphaned Event naming both", [&](std::string* seen) {
    for (const std::string& e : shardSetEvents()) {
      if (e.starts_with("RetainedShardsOrphaned: ") && e.find(shardName(1)) != std::string::npos &&
          e.find(shardName(2)) != std::string::npos) {
        orphaned = e;
        return true;
      }
    }
    *seen = ::testing::PrintToString(shardSetEvents());
    return false;
  }));
  EXPECT_THAT(orphaned, HasSubstr("will not be deleted at their deadline"));
  if (!target_gone) {
    EXPECT_TRUE(intact(ns_, shardName(0)));
    EXPECT_EQ(prometheus()["spec"].value("shards", 0), 1) << "a release never scales";
  }
}

TEST_F(GuardForegroundDeletionTest, KeepsTheRetainedShardsOfAGoneTarget) {
  deleteInTheForegroundWithoutALeader(/*target_gone=*/true);
}

TEST_F(GuardForegroundDeletionTest, KeepsTheRetainedShardsOfATargetThatStays) {
  deleteInTheForegroundWithoutALeader(/*target_gone=*/false);
}

// ---- start-up: shardscaler's own identity, and the certificate from files (cert-manager) ----

std::string shellOutput(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + out);
  return out;
}

class GuardStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ns_ = createNamespace("guard-start");
    // The controller watches another, empty namespace: the objects built by hand in ns_ are the
    // guard's alone.
    idle_ns_ = createNamespace("guard-idle");
    port_ = testenv::pickFreePort();
  }
  void TearDown() override {
    adminClient().remove(kWebhookConfigurations, "", kWebhookConfiguration);
    if (shardscaler_ && HasFailure()) {
      std::cerr << "---- shardscaler log (tail) ----\n" << shardscaler_->logTail() << "\n";
    }
    shardscaler_.reset();
  }

  // deploy/base's RBAC in ns_, with `change` applied first; the ServiceAccount's kubeconfig.
  std::filesystem::path serviceAccount(const std::function<void(std::vector<Json>&)>& change) {
    auto objects = renderedRbac(ns_);
    change(objects);
    apply(yamlStream(objects));
    return cluster().writeKubeconfig("shardscaler-" + ns_, serviceAccountToken(ns_, "shardscaler"));
  }

  void start(const std::filesystem::path& kubeconfig, std::vector<std::string> args) {
    args.emplace_back("--webhook-bind-address=127.0.0.1:" + std::to_string(port_));
    args.emplace_back("--webhook-cert-secret=" + ns_ + "/shardscaler-webhook-cert");
    args.emplace_back("--webhook-hosts=127.0.0.1");
    shardscaler_ = std::make_unique<ShardscalerProcess>(
        ShardscalerOptions{.kubeconfig = kubeconfig,
                           .namespaces = {idle_ns_},
                           .extra_args = std::move(args),
                           .log_file = testLogDir() / "shardscaler.log"});
  }

  std::pair<int, std::string> readyz() const {
    return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz");
  }

  std::string ns_;
  std::string idle_ns_;
  int port_ = 0;
  std::unique_ptr<ShardscalerProcess> shardscaler_;
};

TEST_F(GuardStartupTest, RefusesToStartWithoutItsOwnIdentity) {
  const auto kubeconfig = serviceAccount([&](std::vector<Json>& objects) {
    for (Json& o : objects) {
      if (o.value("kind", "") != "ClusterRole" ||
          o["metadata"].value("name", "") != "shardscaler-guard-" + ns_) {
        continue;
      }
      Json rules = Json::array();
      for (const Json& rule : o["rules"]) {
        if (rule["resources"] != Json({"tokenreviews"})) rules.push_back(rule);
      }
      ASSERT_EQ(rules.size() + 1, o["rules"].size()) << "no tokenreviews rule to take away";
      o["rules"] = rules;
    }
  });
  start(kubeconfig, {});
  ASSERT_TRUE(test_kit::eventually(30s, kPoll, [&](std::string*) {
    return !shardscaler_->running();
  })) << "shardscaler kept running without knowing its own identity";
  const auto status = shardscaler_->terminate(0ms);
  ASSERT_TRUE(status && WIFEXITED(*status)) << "killed";
  EXPECT_EQ(WEXITSTATUS(*status), 1);
  const std::string log = shardscaler_->logTail();
  EXPECT_THAT(log, HasSubstr("shard guard: cannot tell which user shardscaler acts as: the "
                             "TokenReview of shardscaler's own token failed (Forbidden (403)"));
  EXPECT_THAT(log, HasSubstr("--guard-self-user"));

  // Named on the command line, the identity needs no TokenReview.
  start(kubeconfig, {"--guard-self-user=system:serviceaccount:" + ns_ + ":shardscaler"});
  std::pair<int, std::string> ready;
  EXPECT_TRUE(test_kit::eventually(60s, kPoll,
                                   [&](std::string*) {
                                     ready = readyz();
                                     return ready.first == 200;
                                   }))
      << "/readyz " << ready.first << " " << ready.second;
}

// cert-manager mode: shardscaler serves the files it is given and is not ready until it has them;
// it injects nothing, so the caBundle here is set as cert-manager's injector would.
TEST_F(GuardStartupTest, ServesTheCertificateFilesItIsGivenAndIsReadyOnlyWithThem) {
  const auto dir = testLogDir() / "webhook-certs";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto kubeconfig = serviceAccount([](std::vector<Json>&) {});
  start(kubeconfig, {"--webhook-cert-dir=" + dir.string(), "--webhook-cert-refresh=1s"});

  std::pair<int, std::string> ready;
  ASSERT_TRUE(test_kit::eventually(
      60s, kPoll,
      [&](std::string*) {
        ready = readyz();
        return ready.second.find("the shard guard has no serving certificate yet (directory " +
                                 dir.string() + ")") != std::string::npos;
      }))
      << "/readyz " << ready.first << " " << ready.second;
  EXPECT_EQ(ready.first, 503);

  // Written elsewhere and moved in, as the kubelet swaps a mounted Secret.
  const auto staging = testLogDir() / "staging";
  std::filesystem::create_directories(staging);
  shellOutput(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
      "-subj /CN=shardscaler-webhook -addext subjectAltName=IP:127.0.0.1 -keyout " +
      (staging / "tls.key").string() + " -out " + (staging / "tls.crt").string() + " 2>&1");
  for (const char* file : {"tls.key", "tls.crt"}) {
    std::filesystem::rename(staging / file, dir / file);
  }
  EXPECT_TRUE(test_kit::eventually(30s, kPoll,
                                   [&](std::string*) {
                                     ready = readyz();
                                     return ready.first == 200;
                                   }))
      << "/readyz " << ready.first << " " << ready.second;

  prepareNamespace(ns_, ns_);
  const std::string bundle = shellOutput("base64 -w0 " + (dir / "tls.crt").string());
  installWebhookConfiguration(port_, ns_, bundle);
  ASSERT_TRUE(waitUntilCalled(*shardscaler_, ns_));
  buildByHand(ns_, 1);
  createActiveShard(ns_, 0);
  const auto user = cluster().writeKubeconfig("user-1-" + ns_, cluster().userToken(1));
  auto refused = kubectl("--kubeconfig=" + user.string() + " delete statefulset " + shardName(0) +
                         " -n " + ns_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("denied the request: shardscaler guard: rule ActiveShard"));
  EXPECT_TRUE(intact(ns_, shardName(0)));
  // Nothing was written: no Secret, no caBundle but the one set here.
  EXPECT_TRUE(getOrNull(k8s::resources::secrets(), ns_, "shardscaler-webhook-cert").is_null());
  const Json vwc = getOrNull(kWebhookConfigurations, "", kWebhookConfiguration);
  EXPECT_EQ(vwc["webhooks"][0]["clientConfig"].value("caBundle", ""), bundle);
}

}  // namespace
}  // namespace shardscaler::e2e
