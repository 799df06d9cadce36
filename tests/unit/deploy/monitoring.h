// deploy/monitoring for its tests: the PrometheusRule's spec as the plain rules file promtool
// reads, the Grafana dashboard, every PromQL expression either holds, and promtool itself.
// Reads and converts only; the tests decide what is right.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "manifests.h"

namespace shardscaler::deploy_test {

std::filesystem::path monitoringDir();   // deploy/monitoring
std::filesystem::path alertsTestFile();  // tests/unit/deploy/monitoring/alerts_test.yaml
inline constexpr const char* kRulesFileName = "prometheus_rule.rules.yaml";  // what it loads

// deploy/monitoring/prometheus_rule.yaml as JSON, and its `spec` as YAML text (a `groups:`
// document, scalars exactly as written): the rules file promtool reads.
Json prometheusRule();
std::string rulesFileText();
// Every rule of every group (alerts and records).
std::vector<Json> rules();

Json dashboard();  // deploy/monitoring/dashboard.json

struct Expression {
  std::string where;  // "panel 3 target A", "annotation ...", "variable ...", "alert ..."
  std::string promql;
};
// The queries of every panel target (rows' nested panels included), of every annotation with an
// `expr`, and the selector inside each query variable's label_values(...).
std::vector<Expression> dashboardExpressions();
std::vector<Expression> ruleExpressions();

// The query as Prometheus receives it: Grafana's interval variables become 5m, the dashboard's
// own variables a plain value. Throws std::invalid_argument naming a variable that is neither.
std::string withoutGrafanaVariables(const std::string& promql,
                                    const std::vector<std::string>& dashboard_variables);

// promtool with these arguments (found in PATH; Debian's package "prometheus").
CommandResult promtool(const std::vector<std::string>& args);

}  // namespace shardscaler::deploy_test
