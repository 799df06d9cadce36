#include "monitoring.h"

#include <yaml-cpp/yaml.h>

#include <regex>
#include <stdexcept>

namespace shardscaler::deploy_test {

std::filesystem::path monitoringDir() { return deployDir() / "monitoring"; }

std::filesystem::path alertsTestFile() {
  return sourceDir() / "tests" / "unit" / "deploy" / "monitoring" / "alerts_test.yaml";
}

Json prometheusRule() {
  const auto docs = yamlDocuments(readFile(monitoringDir() / "prometheus_rule.yaml"));
  if (docs.size() != 1) throw std::runtime_error("prometheus_rule.yaml holds one document");
  return docs[0];
}

std::string rulesFileText() {
  // Through yaml-cpp's own emitter, not JSON: a scalar stays the string it was written as.
  const YAML::Node rule = YAML::LoadFile((monitoringDir() / "prometheus_rule.yaml").string());
  YAML::Emitter out;
  out << rule["spec"];
  if (!out.good()) throw std::runtime_error("cannot emit the spec: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

std::vector<Json> rules() {
  const Json rule = prometheusRule();  // not in the range-for: g++ 12 would not keep it alive
  std::vector<Json> out;
  for (const Json& group : rule["spec"]["groups"]) {
    for (const Json& rule : group["rules"]) out.push_back(rule);
  }
  return out;
}

Json dashboard() { return Json::parse(readFile(monitoringDir() / "dashboard.json")); }

namespace {

void panelExpressions(const Json& panels, std::vector<Expression>& out) {
  for (const Json& panel : panels) {
    const std::string name =
        "panel " + std::to_string(panel.value("id", -1)) + " (" + panel.value("title", "") + ")";
    for (const Json& target : panel.value("targets", Json::array())) {
      out.push_back({name + " target " + target.value("refId", "?"), target.value("expr", "")});
    }
    panelExpressions(panel.value("panels", Json::array()), out);
  }
}

}  // namespace

std::vector<Expression> dashboardExpressions() {
  const Json d = dashboard();
  std::vector<Expression> out;
  panelExpressions(d.value("panels", Json::array()), out);
  for (const Json& a : d["annotations"].value("list", Json::array())) {
    if (a.contains("expr")) out.push_back({"annotation " + a.value("name", ""), a["expr"]});
  }
  static const std::regex kLabelValues(R"(^\s*label_values\((.*),\s*\w+\s*\)\s*$)");
  for (const Json& v : d["templating"].value("list", Json::array())) {
    if (v.value("type", "") != "query") continue;
    const Json& q = v["query"];
    const std::string query = q.is_object() ? q.value("query", "") : q.get<std::string>();
    std::smatch m;
    out.push_back({"variable " + v.value("name", ""),
                   std::regex_match(query, m, kLabelValues) ? m[1].str() : query});
  }
  return out;
}

std::vector<Expression> ruleExpressions() {
  std::vector<Expression> out;
  for (const Json& rule : rules()) {
    out.push_back({"alert " + rule.value("alert", rule.value("record", "")), rule["expr"]});
  }
  return out;
}

std::string withoutGrafanaVariables(const std::string& promql,
                                    const std::vector<std::string>& dashboard_variables) {
  // $name, ${name}, ${name:format} and [[name]] (Grafana's variable syntaxes).
  static const std::regex kVariable(R"(\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\])");
  std::string out;
  auto it = promql.cbegin();
  for (std::sregex_iterator m(promql.begin(), promql.end(), kVariable), end; m != end; ++m) {
    const std::string name = (*m)[1].matched ? (*m)[1] : (*m)[2].matched ? (*m)[2] : (*m)[3];
    std::string value;
    if (name == "__rate_interval" || name == "__interval" || name == "__range") {
      value = "5m";
    } else if (std::ranges::find(dashboard_variables, name) != dashboard_variables.end()) {
      value = "value";
    } else {
      std::string why = "unknown variable $" + name;
      why += " in: ";
      why += promql;
      throw std::invalid_argument(why);
    }
    out.append(it, promql.cbegin() + m->position());
    out += value;
    it = promql.cbegin() + m->position() + m->length();
  }
  out.append(it, promql.cend());
  return out;
}

CommandResult promtool(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"promtool"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv);
}

}  // namespace shardscaler::deploy_test
