// The webhook configuration the guard expects, and the check that tells the controller whether
// the API server enforces it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "guard_fixtures.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/guard/webhook_configuration.h"

namespace shardscaler::guard {
namespace {

using namespace testing;
using ::testing::HasSubstr;

Json injected() {
  return webhookConfiguration("shardscaler-guard",
                              WebhookClientConfig{.service_namespace = "shardscaler-system",
                                                  .service_name = "shardscaler-webhook",
                                                  .ca_bundle = "LS0tLS1CRUdJTi=="});
}

TEST(WebhookConfiguration, HasTheFourWebhooksAsDeployed) {
  const Json c = injected();
  ASSERT_EQ(c["webhooks"].size(), 4u);
  const Json& del = c["webhooks"][0];
  EXPECT_EQ(del["name"], "delete.guard.shardscaler.io");
  EXPECT_EQ(del["rules"][0]["operations"], Json({"DELETE"}));
  EXPECT_EQ(del["objectSelector"]["matchExpressions"][0]["key"], "shardscaler.io/shardset");
  EXPECT_EQ(del["failurePolicy"], "Fail");
  EXPECT_EQ(del["sideEffects"], "None");
  EXPECT_EQ(del["timeoutSeconds"], 5);
  EXPECT_EQ(del["clientConfig"]["service"]["path"], "/guard/statefulsets");
  // Every managed StatefulSet's UPDATEs, not only retained ones': changing an active shard's index
  // or ShardSet label would otherwise let a later DELETE through. Ignore: a shardscaler outage
  // must not stop the operator's rollouts of active shards.
  const Json& update = c["webhooks"][1];
  EXPECT_EQ(update["name"], "update.guard.shardscaler.io");
  EXPECT_EQ(update["rules"][0]["operations"], Json({"UPDATE"}));
  EXPECT_EQ(update["objectSelector"]["matchExpressions"][0]["key"], "shardscaler.io/shardset");
  EXPECT_EQ(update["objectSelector"]["matchExpressions"][1],
            Json({{"key", "shardscaler.io/retained"}, {"operator", "DoesNotExist"}}));
  EXPECT_EQ(update["failurePolicy"], "Ignore");
  // A retained shard's UPDATEs (the stale operator's re-attach) stay fail-closed. The API server
  // matches the old object too, so dropping the label is seen.
  const Json& retained = c["webhooks"][2];
  EXPECT_EQ(retained["name"], "retained.guard.shardscaler.io");
  EXPECT_EQ(retained["rules"][0]["operations"], Json({"UPDATE"}));
  EXPECT_EQ(retained["objectSelector"]["matchExpressions"][0]["key"], "shardscaler.io/retained");
  EXPECT_EQ(retained["objectSelector"]["matchExpressions"][0]["operator"], "Exists");
  EXPECT_EQ(retained["failurePolicy"], "Fail");
  EXPECT_EQ(retained["clientConfig"]["service"]["path"], "/guard/statefulsets");
  // The targets and their scale subresource, never their status (the operator's writes); Ignore,
  // with no selector: a Scale carries no labels.
  const Json& target = c["webhooks"][3];
  EXPECT_EQ(target["name"], "target.guard.shardscaler.io");
  EXPECT_EQ(target["rules"][0]["resources"], Json({"prometheuses", "prometheuses/scale"}));
  EXPECT_EQ(target["rules"][1]["apiVersions"], Json({"v1alpha1"}));
  EXPECT_EQ(target["rules"][1]["resources"], Json({"prometheusagents", "prometheusagents/scale"}));
  EXPECT_EQ(target["rules"][1]["operations"], Json({"UPDATE"}));
  EXPECT_EQ(target["failurePolicy"], "Ignore");
  EXPECT_FALSE(target.contains("objectSelector"));
  EXPECT_EQ(target["clientConfig"]["service"]["path"], "/guard/statefulsets");

  const Json by_url = webhookConfiguration(
      "x", WebhookClientConfig{.url = "https://127.0.0.1:1234/guard/statefulsets"});
  EXPECT_EQ(by_url["webhooks"][0]["clientConfig"],
            Json({{"url", "https://127.0.0.1:1234/guard/statefulsets"}}));
}

TEST(WebhookConfiguration, ExpectedShapeIsEnforced) {
  const GuardStatus s = checkWebhookConfiguration(injected(), nullptr);
  EXPECT_TRUE(s.enforced) << s.reason;
  // The target webhook only spares the operator refused deletions: without it the StatefulSet
  // webhooks still keep every shard.
  Json without_target = injected();
  without_target["webhooks"].erase(3);
  EXPECT_TRUE(checkWebhookConfiguration(without_target, nullptr).enforced);
  // The configuration of earlier installs: update.guard fails closed for every managed
  // StatefulSet, retained ones included, and there is no retained.guard. Stricter, not weaker.
  Json earlier = injected();
  earlier["webhooks"].erase(3);
  earlier["webhooks"].erase(2);
  earlier["webhooks"][1]["failurePolicy"] = "Fail";
  earlier["webhooks"][1]["objectSelector"]["matchExpressions"].erase(1);
  const GuardStatus e = checkWebhookConfiguration(earlier, nullptr);
  EXPECT_TRUE(e.enforced) << e.reason;
  // update.guard failing closed but leaving retained shards out covers nothing of theirs.
  earlier["webhooks"][1]["objectSelector"]["matchExpressions"].push_back(
      {{"key", "shardscaler.io/retained"}, {"operator", "DoesNotExist"}});
  EXPECT_THAT(checkWebhookConfiguration(earlier, nullptr).reason,
              HasSubstr("has no webhook retained.guard.shardscaler.io"));
}

TEST(WebhookConfiguration, EveryWeakeningIsReported) {
  struct Case {
    std::function<void(Json&)> change;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {[](Json& c) { c["webhooks"].erase(1); }, "has no webhook update.guard.shardscaler.io"},
      {[](Json& c) { c.erase("webhooks"); }, "has no webhook delete.guard.shardscaler.io"},
      {[](Json& c) { c["webhooks"][0]["failurePolicy"] = "Ignore"; },
       "webhook delete.guard.shardscaler.io has failurePolicy Ignore, not Fail"},
      // With update.guard ignoring failures, nothing else keeps a retained shard while
      // shardscaler is down: the stale operator's re-attach would go through.
      {[](Json& c) { c["webhooks"].erase(2); }, "has no webhook retained.guard.shardscaler.io"},
      {[](Json& c) { c["webhooks"][2]["failurePolicy"] = "Ignore"; },
       "webhook retained.guard.shardscaler.io has failurePolicy Ignore, not Fail"},
      {[](Json& c) {
         c["webhooks"][2]["objectSelector"]["matchExpressions"][0]["key"] =
             "shardscaler.io/shardset";
       },
       "webhook retained.guard.shardscaler.io's objectSelector is narrower than "
       "shardscaler.io/retained Exists"},
      {[](Json& c) { c["webhooks"][2]["rules"][0]["operations"] = {"DELETE"}; },
       "webhook retained.guard.shardscaler.io has no rule for UPDATE of apps/v1 statefulsets"},
      {[](Json& c) { c["webhooks"][2]["clientConfig"].erase("caBundle"); },
       "webhook retained.guard.shardscaler.io has no caBundle yet"},
      {[](Json& c) { c["webhooks"][0]["clientConfig"].erase("caBundle"); },
       "webhook delete.guard.shardscaler.io has no caBundle yet"},
      {[](Json& c) { c["webhooks"][1]["clientConfig"]["caBundle"] = ""; },
       "webhook update.guard.shardscaler.io has no caBundle yet"},
      {[](Json& c) { c["webhooks"][0]["rules"][0]["operations"] = {"CREATE"}; },
       "webhook delete.guard.shardscaler.io has no rule for DELETE of apps/v1 statefulsets"},
      {[](Json& c) { c["webhooks"][1]["rules"][0]["resources"] = {"deployments"}; },
       "webhook update.guard.shardscaler.io has no rule for UPDATE of apps/v1 statefulsets"},
      {[](Json& c) { c["webhooks"][0]["rules"][0]["scope"] = "Cluster"; },
       "has no rule for DELETE"},
      {[](Json& c) {
         c["webhooks"][0]["objectSelector"]["matchLabels"] = {{"team", "a"}};
       },
       "webhook delete.guard.shardscaler.io's objectSelector is narrower than "
       "shardscaler.io/shardset Exists"},
      {[](Json& c) { c["webhooks"][1]["objectSelector"]["matchExpressions"][0]["key"] = "other"; },
       "objectSelector is narrower than shardscaler.io/shardset Exists, shardscaler.io/retained "
       "DoesNotExist"},
      {[](Json& c) {
         c["webhooks"][1]["objectSelector"]["matchExpressions"][1]["key"] = "shardscaler.io/x";
       },
       "webhook update.guard.shardscaler.io's objectSelector is narrower than"},
      {[](Json& c) {
         c["webhooks"][2]["objectSelector"]["matchExpressions"].push_back(
             {{"key", "shardscaler.io/shardset"}, {"operator", "DoesNotExist"}});
       },
       "webhook retained.guard.shardscaler.io's objectSelector is narrower than "
       "shardscaler.io/retained Exists"},
      // An older configuration: UPDATEs of retained shards only. Its guard lets an active shard's
      // index be changed and then the shard be deleted.
      {[](Json& c) {
         c["webhooks"].erase(1);
         c["webhooks"][1]["name"] = "reattach.guard.shardscaler.io";
       },
       "has no webhook update.guard.shardscaler.io"},
      {[](Json& c) {
         c["webhooks"][1]["objectSelector"]["matchExpressions"][0]["key"] =
             "shardscaler.io/retained";
       },
       "webhook update.guard.shardscaler.io's objectSelector is narrower than "
       "shardscaler.io/shardset Exists"},
      {[](Json& c) { c["webhooks"][0]["admissionReviewVersions"] = {"v1beta1"}; },
       "admissionReviewVersions lacks v1"},
      {[](Json& c) {
         c["webhooks"][0]["namespaceSelector"] = {{"matchLabels", {{"guarded", "yes"}}}};
       },
       "has a namespaceSelector and the namespace is unknown"},
      {[](Json& c) {
         c["webhooks"][2]["namespaceSelector"] = {{"matchLabels", {{"guarded", "yes"}}}};
       },
       "webhook retained.guard.shardscaler.io has a namespaceSelector and the namespace is "
       "unknown"},
  };
  for (const auto& c : cases) {
    Json configuration = injected();
    c.change(configuration);
    const GuardStatus s = checkWebhookConfiguration(configuration, nullptr);
    EXPECT_FALSE(s.enforced) << c.reason;
    EXPECT_THAT(s.reason, HasSubstr(c.reason));
  }
}

TEST(WebhookConfiguration, BroaderRulesAndSelectorsStillEnforce) {
  Json c = injected();
  c["webhooks"][0]["rules"] = Json::parse(
      R"([{"apiGroups":["*"],"apiVersions":["*"],"resources":["*/*"],"operations":["*"]}])");
  c["webhooks"][1].erase("objectSelector");
  c["webhooks"][2].erase("failurePolicy");  // v1's default is Fail
  c["webhooks"][2]["objectSelector"].erase("matchExpressions");
  EXPECT_TRUE(checkWebhookConfiguration(c, nullptr).enforced);
  // update.guard failing closed is stricter than deployed; it then covers retained shards alone.
  c["webhooks"][1]["failurePolicy"] = "Fail";
  c["webhooks"].erase(2);
  EXPECT_TRUE(checkWebhookConfiguration(c, nullptr).enforced);
}

TEST(WebhookConfiguration, NamespaceSelectorIsMatchedAgainstTheNamespace) {
  Json c = injected();
  c["webhooks"][0]["namespaceSelector"] = Json::parse(
      R"({"matchLabels":{"guard":"on"},"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]},{"key":"skip","operator":"DoesNotExist"}]})");
  c["webhooks"][1]["namespaceSelector"] = Json::parse(
      R"({"matchExpressions":[{"key":"tier","operator":"NotIn","values":["c"]},{"key":"guard","operator":"Exists"}]})");
  auto ns = [](const Json& labels) { return Json{{"metadata", {{"labels", labels}}}}; };
  EXPECT_TRUE(checkWebhookConfiguration(c, ns({{"guard", "on"}, {"tier", "a"}})).enforced);
  EXPECT_THAT(
      checkWebhookConfiguration(c, ns({{"guard", "on"}, {"tier", "c"}})).reason,
      HasSubstr("delete.guard.shardscaler.io's namespaceSelector leaves this namespace out"));
  EXPECT_FALSE(checkWebhookConfiguration(c, ns({{"guard", "off"}, {"tier", "a"}})).enforced);
  EXPECT_FALSE(
      checkWebhookConfiguration(c, ns({{"guard", "on"}, {"tier", "a"}, {"skip", "1"}})).enforced);
  EXPECT_FALSE(checkWebhookConfiguration(c, Json{{"metadata", Json::object()}}).enforced);
  c["webhooks"][0]["namespaceSelector"]["matchExpressions"][0]["operator"] = "Near";
  EXPECT_THAT(checkWebhookConfiguration(c, ns({{"guard", "on"}, {"tier", "a"}})).reason,
              HasSubstr("unknown operator \"Near\""));
}

TEST(GuardStatusRead, ReadsTheConfigurationAndOnlyThenTheNamespace) {
  FakeKubeClient client;
  GuardStatus s = readGuardStatus(client, "shardscaler-guard", "monitoring");
  EXPECT_FALSE(s.enforced);
  EXPECT_EQ(s.reason, "ValidatingWebhookConfiguration shardscaler-guard does not exist");

  client.objects["validatingwebhookconfigurations//shardscaler-guard"] = injected();
  s = readGuardStatus(client, "shardscaler-guard", "monitoring");
  EXPECT_TRUE(s.enforced) << s.reason;
  EXPECT_EQ(client.gets.size(), 2u);  // no namespace read

  Json scoped = injected();
  scoped["webhooks"][0]["namespaceSelector"] = {{"matchLabels", {{"guard", "on"}}}};
  client.objects["validatingwebhookconfigurations//shardscaler-guard"] = scoped;
  s = readGuardStatus(client, "shardscaler-guard", "monitoring");
  EXPECT_FALSE(s.enforced);
  EXPECT_THAT(s.reason, HasSubstr("cannot read namespace monitoring"));
  client.objects["namespaces//monitoring"] = Json{{"metadata", {{"labels", {{"guard", "on"}}}}}};
  EXPECT_TRUE(readGuardStatus(client, "shardscaler-guard", "monitoring").enforced);

  client.objects["validatingwebhookconfigurations//shardscaler-guard"] = std::unexpected(
      k8s::Error{.kind = k8s::ErrorKind::Forbidden, .http_status = 403, .message = "no get"});
  s = readGuardStatus(client, "shardscaler-guard", "monitoring");
  EXPECT_FALSE(s.enforced);
  EXPECT_THAT(s.reason, HasSubstr("cannot read ValidatingWebhookConfiguration shardscaler-guard: "
                                  "Forbidden (403): no get"));
}

}  // namespace
}  // namespace shardscaler::guard
