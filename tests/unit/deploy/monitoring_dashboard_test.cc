// deploy/monitoring/dashboard.json: the structure Grafana's dashboard schema (version 39, as
// kinds/dashboard/dashboard_kind.cue of Grafana 10.x) requires, every PromQL expression parses
// (promtool, as recording rules), the panels the operators asked for, and the ConfigMap that
// provisions it carries the file unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "monitoring.h"
#include "shardscaler/test_kit/temp_dir.h"

namespace shardscaler::deploy_test {
namespace {

constexpr int kSchemaVersion = 39;

std::vector<std::string> variableNames(const Json& d) {
  std::vector<std::string> names;
  for (const Json& v : d["templating"]["list"]) names.push_back(v.value("name", ""));
  return names;
}

// Every panel, rows' nested panels included.
void allPanels(const Json& panels, std::vector<Json>& out) {
  for (const Json& p : panels) {
    out.push_back(p);
    allPanels(p.value("panels", Json::array()), out);
  }
}
std::vector<Json> allPanels() {
  std::vector<Json> out;
  allPanels(dashboard()["panels"], out);
  return out;
}

bool isUint(const Json& j) { return j.is_number_integer() && j.get<int64_t>() >= 0; }

TEST(DashboardTest, DeclaresItsSchemaVersionAndTheDashboardFields) {
  const Json d = dashboard();  // throws, failing the test, unless it is JSON
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d.value("schemaVersion", 0), kSchemaVersion);
  EXPECT_FALSE(d.value("uid", "").empty());
  EXPECT_LE(d.value("uid", "").size(), 40u);
  EXPECT_FALSE(d.value("title", "").empty());
  EXPECT_TRUE(d["id"].is_null()) << "an instance's own id; Grafana assigns it";
  EXPECT_TRUE(d["editable"].is_boolean());
  EXPECT_TRUE(isUint(d["graphTooltip"]) && d["graphTooltip"].get<int>() <= 2);
  EXPECT_TRUE(d["time"]["from"].is_string() && d["time"]["to"].is_string());
  EXPECT_TRUE(d["panels"].is_array() && !d["panels"].empty());
  for (const Json& a : d["annotations"]["list"]) {
    SCOPED_TRACE(a.dump());
    EXPECT_TRUE(a["name"].is_string());
    EXPECT_TRUE(a["datasource"].is_object());
    EXPECT_TRUE(a["enable"].is_boolean());
    EXPECT_TRUE(a["iconColor"].is_string());
  }
  static const std::set<std::string> kVariableTypes = {
      "query", "adhoc", "constant", "datasource", "interval", "textbox", "custom", "system"};
  std::set<std::string> names;
  for (const Json& v : d["templating"]["list"]) {
    SCOPED_TRACE(v.dump());
    EXPECT_TRUE(names.insert(v.value("name", "")).second) << "two variables of one name";
    EXPECT_TRUE(kVariableTypes.contains(v.value("type", "")));
    EXPECT_TRUE(isUint(v["hide"]) && v["hide"].get<int>() <= 2);
  }
  // Every query reaches Prometheus through the dashboard's data source variable, so the
  // dashboard works with whatever the data source is called.
  ASSERT_TRUE(names.contains("datasource"));
  for (const Json& v : d["templating"]["list"]) {
    if (v.value("name", "") == "datasource") EXPECT_EQ(v.value("query", ""), "prometheus");
  }
}

TEST(DashboardTest, PanelsHaveTheFieldsOfTheSchema) {
  std::set<int64_t> ids;
  std::vector<std::pair<std::string, Json>> placed;
  for (const Json& p : allPanels()) {
    const std::string name = p.value("title", "") + " (id " + p.value("id", Json()).dump() + ")";
    SCOPED_TRACE(name);
    ASSERT_TRUE(isUint(p["id"]));
    EXPECT_TRUE(ids.insert(p["id"].get<int64_t>()).second) << "two panels of one id";
    EXPECT_FALSE(p.value("type", "").empty());
    const Json& g = p["gridPos"];
    ASSERT_TRUE(isUint(g["h"]) && isUint(g["w"]) && isUint(g["x"]) && isUint(g["y"])) << g;
    EXPECT_GT(g["h"].get<int>(), 0);
    EXPECT_GT(g["w"].get<int>(), 0);
    EXPECT_LE(g["x"].get<int>() + g["w"].get<int>(), 24) << "wider than the grid";
    placed.emplace_back(name, g);
    if (p["type"] == "row") {
      EXPECT_TRUE(p["collapsed"].is_boolean());
      EXPECT_TRUE(p["panels"].is_array());
      continue;
    }
    EXPECT_TRUE(p["options"].is_object());
    EXPECT_TRUE(p["fieldConfig"]["defaults"].is_object());
    EXPECT_TRUE(p["fieldConfig"]["overrides"].is_array());
    EXPECT_TRUE(p["transformations"].is_array());
    EXPECT_EQ(p["datasource"], Json({{"type", "prometheus"}, {"uid", "${datasource}"}}));
    ASSERT_TRUE(p["targets"].is_array() && !p["targets"].empty()) << "a panel with no query";
    std::set<std::string> ref_ids;
    for (const Json& t : p["targets"]) {
      EXPECT_TRUE(ref_ids.insert(t.value("refId", "")).second) << "refId repeated or missing";
      EXPECT_FALSE(t.value("refId", "").empty());
      EXPECT_FALSE(t.value("expr", "").empty());
      EXPECT_EQ(t["datasource"], p["datasource"]);
    }
    for (const Json& o : p["fieldConfig"]["overrides"]) {
      if (o["matcher"].value("id", "") != "byFrameRefID") continue;
      EXPECT_TRUE(ref_ids.contains(o["matcher"].value("options", "")))
          << "an override for a query the panel does not have";
    }
  }
  // Grafana moves overlapping panels around; the layout is the one written here.
  for (size_t i = 0; i < placed.size(); ++i) {
    for (size_t j = i + 1; j < placed.size(); ++j) {
      const Json& a = placed[i].second;
      const Json& b = placed[j].second;
      const bool apart = a["x"].get<int>() + a["w"].get<int>() <= b["x"].get<int>() ||
                         b["x"].get<int>() + b["w"].get<int>() <= a["x"].get<int>() ||
                         a["y"].get<int>() + a["h"].get<int>() <= b["y"].get<int>() ||
                         b["y"].get<int>() + b["h"].get<int>() <= a["y"].get<int>();
      EXPECT_TRUE(apart) << placed[i].first << " overlaps " << placed[j].first;
    }
  }
}

TEST(DashboardTest, EveryExpressionParses) {
  const auto variables = variableNames(dashboard());
  Json records = Json::array();
  for (const Expression& e : dashboardExpressions()) {
    SCOPED_TRACE(e.where);
    ASSERT_FALSE(e.promql.empty());
    std::string promql;
    ASSERT_NO_THROW(promql = withoutGrafanaVariables(e.promql, variables));
    // The record's name says which query a parse error is about.
    records.push_back({{"record", "dashboard:query_" + std::to_string(records.size())},
                       {"expr", promql},
                       {"labels", {{"query", e.where}}}});
  }
  ASSERT_GT(records.size(), 10u);
  const Json file = {{"groups", {{{"name", "dashboard"}, {"rules", records}}}}};
  test_kit::TempDir dir("dashboard-");
  const auto path = dir.write("dashboard.rules.yaml", file.dump(2));  // JSON is YAML
  const CommandResult r = promtool({"check", "rules", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS: " + std::to_string(records.size()) + " rules found"),
            std::string::npos)
      << r.out << r.err;
}

TEST(DashboardTest, AnUnknownVariableIsAnError) {
  EXPECT_EQ(withoutGrafanaVariables(R"(rate(x{a=~"$namespace"}[$__rate_interval]))", {"namespace"}),
            R"(rate(x{a=~"value"}[5m]))");
  EXPECT_THROW(withoutGrafanaVariables(R"(x{a="${cluster}"})", {"namespace"}),
               std::invalid_argument);
}

// The panels issue 28 asks for: shards, ingestion with the recommendation, transitions and their
// duration, guard reviews and denials, reconcile errors, the HPA's external metrics requests.
TEST(DashboardTest, HasThePanelsOperatorsAskedFor) {
  std::map<std::string, std::string> queries_by_title;
  for (const Json& p : allPanels()) {
    for (const Json& t : p.value("targets", Json::array())) {
      queries_by_title[p.value("title", "")] += t.value("expr", "") + "\n";
    }
  }
  const auto panelReading = [&](std::initializer_list<const char*> metrics) {
    for (const auto& [title, queries] : queries_by_title) {
      if (std::ranges::all_of(
              metrics, [&](const char* m) { return queries.find(m) != std::string::npos; })) {
        return title;
      }
    }
    return std::string();
  };
  for (const auto& metrics : std::vector<std::initializer_list<const char*>>{
           {"shardscaler_desired_shards", "shardscaler_active_shards",
            "shardscaler_retained_shards"},
           {"shardscaler_shard_ingestion_samples_per_second", "shardscaler_recommended_shards"},
           {"shardscaler_transitions_total"},
           {"shardscaler_transition_duration_seconds_bucket"},
           {"shardscaler_guard_reviews_total"},
           {"shardscaler_guard_denials_total"},
           {"shardscaler_reconcile_errors_total"},
           {"shardscaler_external_metrics_requests_total"}}) {
    EXPECT_NE(panelReading(metrics), "") << "no panel reads " << *metrics.begin();
  }
}

TEST(DashboardTest, TheConfigMapProvisionsTheFileUnchanged) {
  const auto objects = render("monitoring").objects;
  auto config_map = find(objects, "ConfigMap", "shardscaler-dashboard");
  ASSERT_TRUE(config_map);
  // The label Grafana's dashboard sidecar watches (kube-prometheus-stack's default).
  EXPECT_EQ((*config_map)["metadata"]["labels"].value("grafana_dashboard", ""), "1");
  const Json& data = (*config_map)["data"];
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data.value("shardscaler.json", ""), readFile(monitoringDir() / "dashboard.json"));
}

}  // namespace
}  // namespace shardscaler::deploy_test
