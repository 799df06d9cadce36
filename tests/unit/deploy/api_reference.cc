#include "api_reference.h"

#include <set>
#include <sstream>

namespace shardscaler::deploy_test {
namespace {

using Json = nlohmann::json;

// A table cell: one line, and no "|" that would end it.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

std::string scalar(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string typeOf(const Json& node) {
  std::string type = node.value("type", "");
  if (type == "array" && node.contains("items")) type = "[]" + node["items"].value("type", "");
  if (node.contains("format")) type += " (" + node["format"].get<std::string>() + ")";
  return type;
}

// "0 to 1000", "at least 1", "1 to 253 characters", "one of: Retain, Delete", "required".
std::string boundsOf(const Json& node, bool required) {
  std::vector<std::string> parts;
  if (required) parts.emplace_back("required");
  const bool min = node.contains("minimum");
  const bool max = node.contains("maximum");
  if (min && max) {
    parts.push_back(scalar(node["minimum"]) + " to " + scalar(node["maximum"]));
  } else if (min) {
    parts.push_back("at least " + scalar(node["minimum"]));
  } else if (max) {
    parts.push_back("at most " + scalar(node["maximum"]));
  }
  const bool min_length = node.contains("minLength");
  const bool max_length = node.contains("maxLength");
  if (min_length && max_length) {
    parts.push_back(scalar(node["minLength"]) + " to " + scalar(node["maxLength"]) + " characters");
  } else if (min_length) {
    parts.push_back("at least " + scalar(node["minLength"]) + " character" +
                    (node["minLength"] == 1 ? "" : "s"));
  }
  if (node.contains("enum")) {
    std::string values;
    for (const Json& v : node["enum"]) values += (values.empty() ? "" : ", ") + scalar(v);
    parts.push_back("one of: " + values);
  }
  if (node.contains("pattern")) parts.push_back("pattern `" + scalar(node["pattern"]) + "`");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

void rows(const Json& node, const std::string& path, bool required, std::ostringstream& out) {
  out << "| `" << path << "` | " << cell(typeOf(node)) << " | "
      << (node.contains("default") ? "`" + scalar(node["default"]) + "`" : "") << " | "
      << cell(boundsOf(node, required)) << " | " << cell(node.value("description", "")) << " |\n";
  const Json& schema = node.contains("items") ? node["items"] : node;
  const std::string prefix = node.contains("items") ? path + "[]" : path;
  std::set<std::string> required_fields;
  for (const Json& r : schema.value("required", Json::array())) required_fields.insert(r);
  const Json properties = schema.value("properties", Json::object());
  for (const auto& [key, child] : properties.items()) {
    rows(child, std::string(prefix).append(".").append(key), required_fields.contains(key), out);
  }
}

}  // namespace

std::string apiReference(const Json& crd) {
  const Json& spec = crd.at("spec");
  const Json& version = spec.at("versions").at(0);
  const Json& schema = version.at("schema").at("openAPIV3Schema");
  const Json& names = spec.at("names");
  std::ostringstream out;
  out << "# ShardSet API reference\n\n"
      << "<!-- Generated from deploy/crds/shardscaler.io_shardsets.yaml by tests/unit/deploy "
         "(api_reference_test); do not edit. Change the CRD's descriptions and run the test with "
         "SHARDSCALER_UPDATE_GOLDEN=1. -->\n\n"
      << "`" << scalar(spec.at("group")) << "/" << scalar(version.at("name")) << "`, kind `"
      << scalar(names.at("kind")) << "`, "
      << (scalar(spec.at("scope")) == "Namespaced" ? "namespaced" : "cluster-scoped")
      << ", short name";
  for (const Json& s : names.value("shortNames", Json::array())) out << " `" << scalar(s) << "`";
  out << ". `kubectl explain shardset` and `kubectl explain shardset.<field>` print the same "
         "descriptions from the API server.\n\n"
      << schema.value("description", "") << "\n\n";

  out << "## Scale subresource\n\n"
      << "HPAs and `kubectl scale shardset/NAME --replicas=N` read and write these paths:\n\n"
      << "| scale field | ShardSet field |\n|---|---|\n";
  const Json scale = version.value("subresources", Json::object()).value("scale", Json::object());
  for (const auto& [field, scale_name] : {std::pair{"specReplicasPath", "spec.replicas"},
                                          std::pair{"statusReplicasPath", "status.replicas"},
                                          std::pair{"labelSelectorPath", "status.selector"}}) {
    out << "| `" << scale_name << "` | `" << scale.value(field, "") << "` |\n";
  }

  out << "\n## Columns of `kubectl get shardsets`\n\n"
      << "| column | JSON path | shows |\n|---|---|---|\n";
  for (const Json& c : version.value("additionalPrinterColumns", Json::array())) {
    out << "| " << scalar(c.at("name")) << (c.value("priority", 0) > 0 ? " (with `-o wide`)" : "")
        << " | `" << cell(scalar(c.at("jsonPath"))) << "` | "
        << cell(c.value("description", "when the object was created")) << " |\n";
  }

  for (const char* top : {"spec", "status"}) {
    const Json& node = schema.at("properties").at(top);
    out << "\n## " << top << "\n\n"
        << node.value("description", "") << "\n\n"
        << "| field | type | default | bounds | description |\n|---|---|---|---|---|\n";
    std::set<std::string> required_here;
    for (const Json& r : node.value("required", Json::array())) required_here.insert(r);
    const Json properties = node.value("properties", Json::object());
    for (const auto& [key, child] : properties.items()) {
      rows(child, std::string(top) + "." + key, required_here.contains(key), out);
    }
  }
  return out.str();
}

}  // namespace shardscaler::deploy_test
