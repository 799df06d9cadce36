// docs/design/metrics.md, the table of shardscaler's metrics: every family telemetry::Metrics
// exports is a row "exported" with its type and labels; every metric the alerts and the dashboard
// use is a row; a row "planned" (the C++ code does not export it yet) is not exported.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "monitoring.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::deploy_test {
namespace {

struct Row {
  std::string type;
  std::set<std::string> labels;
  std::string status;  // "exported" or "planned"
};

// The table of docs/design/metrics.md, by metric name.
std::map<std::string, Row> metricsTable() {
  const std::string page = readFile(sourceDir() / "docs" / "design" / "metrics.md");
  if (page.find("\n| metric |") == std::string::npos)
    throw std::runtime_error("docs/design/metrics.md has no table of metrics");
  std::istringstream section(page);
  // | `name` | type | `label`, `label` | meaning | status |
  static const std::regex kRow(R"(^\| `([a-z_]+)` \|([^|]*)\|([^|]*)\|[^|]*\|([^|]*)\|$)");
  static const std::regex kLabel("`([a-z_]+)`");
  static const std::regex kWord(R"(\s*(\w+)\s*)");
  std::map<std::string, Row> table;
  std::string line;
  while (std::getline(section, line)) {
    std::smatch m;
    std::smatch type;
    std::smatch status;
    if (!std::regex_match(line, m, kRow)) continue;
    const std::string type_cell = m[2];
    const std::string status_cell = m[4];
    if (!std::regex_match(type_cell, type, kWord) ||
        !std::regex_match(status_cell, status, kWord)) {
      throw std::runtime_error("docs/design/metrics.md: cannot read the row " + line);
    }
    Row row{type[1], {}, status[1]};
    const std::string labels = m[3];
    for (std::sregex_iterator l(labels.begin(), labels.end(), kLabel), e; l != e; ++l) {
      row.labels.insert((*l)[1]);
    }
    if (!table.emplace(m[1], row).second) throw std::runtime_error("two rows for " + m[1].str());
  }
  return table;
}

// Calls every method of telemetry::Metrics, so that each family has a series. Label values
// here have no quotes, braces or commas: the label names below are read with a plain regex.
std::string exposition() {
  telemetry::Metrics m(telemetry::BuildInfo{"1.2.3", "abcdef"});
  m.setShardSamples("monitoring", "main", 0, 410000);
  m.setTotalSamples("monitoring", "main", 410000);
  m.setRecommendedShards("monitoring", "main", 1);
  m.setShardCounts("monitoring", "main", 1, 1, 0);
  m.observeReconcile(telemetry::ReconcileResult::Error, 0.5);
  m.incWatchRestart("statefulsets", "gone");
  m.observeKubeRequest("GET", "statefulsets.apps/v1", 200, 0.01);
  m.observePromQuery(0.1, "timeout");
  m.setWorkQueueDepth("shardsets", 1);
  m.incWorkQueueAdds("shardsets");
  m.incWorkQueueRetries("shardsets");
  m.setLeader(true);
  m.observeGuardReview("DELETE", "denied",
                       telemetry::Metrics::GuardDenial{.rule = "ActiveShard",
                                                       .requester = "service_account",
                                                       .ns = "monitoring",
                                                       .shardset = "main"},
                       0.01);
  m.setShardSetConditions(
      "monitoring", "main",
      std::vector<telemetry::Metrics::ConditionState>{{"Ready", "True", "ShardsReady"},
                                                      {"Degraded", "False", "AsExpected"}});
  m.setTargetPaused("monitoring", "main", "Prometheus", "main", 1795000000);
  m.setGuardEnforced("monitoring", "main", true);
  m.observeTransition("monitoring", "main", "down", "completed", 1.5);
  m.setRetainedShards("monitoring", "main", 1,
                      std::vector<telemetry::Metrics::RetainedShardState>{
                          {.shard = 1,
                           .stateful_set = "prometheus-main-shard-1",
                           .phase = "Draining",
                           .deadline = 1795000000,
                           .lag_seconds = 40,
                           .draining_since = 1795000001}});

  m.observeExternalMetricsRequest("metric", 503, "StaleRates", 0.01);
  m.setExternalMetricsApiOwner("ours", true);
  m.incDegraded("ingestion_query_failed");
  return m.serialize();
}

struct Family {
  std::string type;
  std::set<std::string> labels;
};

std::map<std::string, Family> exportedFamilies() {
  const std::string text = exposition();
  std::map<std::string, Family> families;
  static const std::regex kType(R"(^# TYPE (\S+) (\S+)$)");
  static const std::regex kSample(R"(^([a-z_]+)(\{([^}]*)\})? \S+$)");
  static const std::regex kLabelName(R"(([a-z_]+)=")");
  std::istringstream in(text);
  std::string line;
  std::string current;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kType)) {
      current = m[1];
      families[current].type = m[2];
    } else if (std::regex_match(line, m, kSample) && !current.empty()) {
      const std::string labels = m[3];
      for (std::sregex_iterator l(labels.begin(), labels.end(), kLabelName), e; l != e; ++l) {
        if ((*l)[1] != "le") families[current].labels.insert((*l)[1]);
      }
    }
  }
  return families;
}

// shardscaler_* names in the alerts and the dashboard, a histogram's series by family.
std::set<std::string> usedMetrics() {
  auto expressions = ruleExpressions();
  const auto panels = dashboardExpressions();
  expressions.insert(expressions.end(), panels.begin(), panels.end());
  static const std::regex kName(R"(\bshardscaler_[a-z_]+)");
  static const std::regex kHistogramSeries(R"((.*)_(bucket|count|sum))");
  std::set<std::string> used;
  for (const Expression& e : expressions) {
    for (std::sregex_iterator m(e.promql.begin(), e.promql.end(), kName), end; m != end; ++m) {
      std::smatch h;
      const std::string name = m->str();
      used.insert(std::regex_match(name, h, kHistogramSeries) ? h[1].str() : name);
    }
  }
  return used;
}

TEST(MetricsTableTest, EveryExportedFamilyIsARowWithItsTypeAndLabels) {
  const auto table = metricsTable();
  const auto families = exportedFamilies();
  ASSERT_GE(families.size(), 28u);
  for (const auto& [name, family] : families) {
    SCOPED_TRACE(name);
    auto row = table.find(name);
    ASSERT_NE(row, table.end()) << "not in docs/design/metrics.md";
    EXPECT_EQ(row->second.status, "exported");
    EXPECT_EQ(row->second.type, family.type);
    EXPECT_EQ(row->second.labels, family.labels);
  }
  for (const auto& [name, row] : table) {
    if (row.status == "exported") {
      EXPECT_TRUE(families.contains(name)) << name << " is marked exported but is not";
    }
  }
}

TEST(MetricsTableTest, EveryMetricTheAlertsAndPanelsUseIsARow) {
  const auto table = metricsTable();
  const auto used = usedMetrics();
  ASSERT_GT(used.size(), 20u);
  for (const std::string& name : used) {
    EXPECT_TRUE(table.contains(name)) << name << " is used but not in docs/design/metrics.md";
  }
}

TEST(MetricsTableTest, APlannedRowIsNotExportedYet) {
  const auto families = exportedFamilies();
  int planned = 0;
  for (const auto& [name, row] : metricsTable()) {
    if (row.status != "planned") {
      EXPECT_EQ(row.status, "exported") << name;
      continue;
    }
    ++planned;
    EXPECT_FALSE(families.contains(name))
        << name << " is exported now: mark its row exported (and drop the runbook's Needs)";
  }
  RecordProperty("planned", planned);
}

}  // namespace
}  // namespace shardscaler::deploy_test
