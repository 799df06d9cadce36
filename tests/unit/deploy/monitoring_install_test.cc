// deploy/monitoring in an install: deploy/overlays/monitoring is deploy/base plus exactly the
// PodMonitor, the PrometheusRule and the dashboard's ConfigMap in base's namespace; the
// PodMonitor scrapes the metrics port of every install's shardscaler and nothing else, under the
// job the rules and the dashboard select.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "monitoring.h"
#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

std::string objectKey(const Json& o) {
  return o.value("kind", "") + " " + o["metadata"].value("namespace", "") + "/" +
         o["metadata"].value("name", "");
}

TEST(MonitoringInstallTest, TheOverlayIsTheBaseWithTheMonitoringObjects) {
  const auto& base = render("base").objects;
  const auto& overlay = render("overlays/monitoring").objects;
  std::map<std::string, Json> by_key;
  for (const Json& o : overlay) by_key[objectKey(o)] = o;
  for (const Json& o : base) {
    SCOPED_TRACE(objectKey(o));
    ASSERT_TRUE(by_key.contains(objectKey(o))) << "missing from deploy/overlays/monitoring";
    EXPECT_EQ(by_key[objectKey(o)], o) << "changed by deploy/overlays/monitoring";
    by_key.erase(objectKey(o));
  }
  std::set<std::string> added;
  for (const auto& [key, o] : by_key) added.insert(key);
  EXPECT_EQ(added, (std::set<std::string>{"ConfigMap shardscaler-system/shardscaler-dashboard",
                                          "PodMonitor shardscaler-system/shardscaler",
                                          "PrometheusRule shardscaler-system/shardscaler"}));
  // ... and they are deploy/monitoring's, moved into the namespace only.
  for (Json o : render("monitoring").objects) {
    SCOPED_TRACE(objectKey(o));
    o["metadata"]["namespace"] = "shardscaler-system";
    ASSERT_TRUE(by_key.contains(objectKey(o)));
    EXPECT_EQ(by_key[objectKey(o)], o);
  }
}

bool selectorMatches(const Json& selector, const Json& labels) {
  const Json match_labels = selector.value("matchLabels", Json::object());
  for (const auto& [key, value] : match_labels.items()) {
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  for (const Json& e : selector.value("matchExpressions", Json::array())) {
    const std::string key = e["key"];
    const std::string op = e["operator"];
    const Json values = e.value("values", Json::array());
    const bool has = labels.contains(key);
    const bool in = has && std::ranges::find(values, labels[key]) != values.end();
    if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && !has) ||
        (op == "DoesNotExist" && has)) {
      return false;
    }
  }
  return true;
}

TEST(MonitoringInstallTest, ThePodMonitorScrapesEachInstallsMetricsPortOnly) {
  auto monitor = find(render("monitoring").objects, "PodMonitor", "shardscaler");
  ASSERT_TRUE(monitor);
  const Json& spec = (*monitor)["spec"];
  for (const auto& install : shardscalerInstalls()) {
    SCOPED_TRACE("deploy/" + install.dir);
    const ShardscalerPod pod = shardscalerPod(install);
    ASSERT_TRUE(
        selectorMatches(spec["selector"], pod.deployment["spec"]["template"]["metadata"]["labels"]))
        << "the PodMonitor does not select shardscaler's pod";
    // A PodMonitor endpoint scrapes the port of that name in any container of the pod.
    std::vector<int64_t> scraped;
    for (const Json& endpoint : spec["podMetricsEndpoints"]) {
      for (const Json& container : pod.pod_spec["containers"]) {
        for (const Json& port : container.value("ports", Json::array())) {
          if (port.value("name", "") == endpoint.value("port", "")) {
            scraped.push_back(port.value("containerPort", -1));
          }
        }
      }
    }
    ASSERT_TRUE(pod.options.metrics_bind_address);
    EXPECT_EQ(scraped, std::vector<int64_t>{pod.options.metrics_bind_address->port})
        << "each pod must be one target, on shardscaler's --metrics-bind-address";
  }
}

TEST(MonitoringInstallTest, EveryEndpointKeepsTheShardSetNamespaceAndSetsTheJob) {
  auto monitor = find(render("monitoring").objects, "PodMonitor", "shardscaler");
  ASSERT_TRUE(monitor);
  for (const Json& endpoint : (*monitor)["spec"]["podMetricsEndpoints"]) {
    SCOPED_TRACE(endpoint.dump());
    EXPECT_EQ(endpoint.value("path", ""), "/metrics");
    // Else a ShardSet's `namespace` label becomes exported_namespace.
    EXPECT_TRUE(endpoint.value("honorLabels", false));
    const Json& last = endpoint["relabelings"].back();
    EXPECT_EQ(last.value("targetLabel", ""), "job");
    EXPECT_EQ(last.value("replacement", ""), "shardscaler");
    EXPECT_EQ(last.value("action", "replace"), "replace");
  }
}

// Every selector of a shardscaler series (and of `up`) in the rules and the dashboard names
// job="shardscaler", the job the PodMonitor sets: another job's metrics never mix in, and a
// query without it would not follow a change of the job.
TEST(MonitoringInstallTest, EveryQuerySelectsTheJobThePodMonitorSets) {
  static const std::regex kSeries(R"(\b(shardscaler_[a-z_]+|up)\b(\{[^}]*\})?)");
  auto expressions = ruleExpressions();
  const auto panels = dashboardExpressions();
  expressions.insert(expressions.end(), panels.begin(), panels.end());
  int selectors = 0;
  for (const Expression& e : expressions) {
    SCOPED_TRACE(e.where + ": " + e.promql);
    for (std::sregex_iterator m(e.promql.begin(), e.promql.end(), kSeries), end; m != end; ++m) {
      // A metric name inside a label value or a string (e.g. the alert's text) is no selector.
      if (m->position() > 0 && e.promql[m->position() - 1] == '"') continue;
      ++selectors;
      EXPECT_NE((*m)[2].str().find(R"(job="shardscaler")"), std::string::npos) << m->str();
    }
  }
  EXPECT_GT(selectors, 40);
}

}  // namespace
}  // namespace shardscaler::deploy_test
