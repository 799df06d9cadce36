// The CRD's openAPIV3Schema (deploy/crds) against the ShardSet types: the same fields in both,
// with the same JSON types, bounds, enums and defaults, so neither can change without the other.
// The field table is itself held to the codecs: it lists exactly what they write and read.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/shard_set_schema.h"
#include "shardscaler/api/shard_set_status.h"
#include "yaml_json.h"

namespace shardscaler::api {
namespace {

using Json = nlohmann::json;

Json crdSchema() {
  std::ifstream in(SHARDSET_CRD_PATH);
  std::stringstream text;
  text << in.rdbuf();
  const auto docs = deploy_test::yamlStreamToJson(text.str());
  if (docs.size() != 1) throw std::runtime_error("expected one document in " SHARDSET_CRD_PATH);
  const Json& versions = docs[0].at("spec").at("versions");
  if (versions.size() != 1) throw std::runtime_error("expected one version of the CRD");
  return versions[0].at("schema").at("openAPIV3Schema");
}

// Every schema node under spec and status by its path ("[]" for list items).
void walkSchema(const Json& node, const std::string& path, std::map<std::string, Json>& out) {
  out[path] = node;
  if (auto props = node.find("properties"); props != node.end()) {
    for (const auto& [key, child] : props->items()) {
      walkSchema(child, std::string(path).append(".").append(key), out);
    }
  }
  if (auto items = node.find("items"); items != node.end()) walkSchema(*items, path + "[]", out);
}

std::map<std::string, Json> schemaFields() {
  const Json schema = crdSchema();
  std::map<std::string, Json> out;
  for (const char* top : {"spec", "status"}) walkSchema(schema.at("properties").at(top), top, out);
  return out;
}

std::map<std::string, const FieldSchema*> typeFields(std::string_view prefix = "") {
  std::map<std::string, const FieldSchema*> out;
  for (const FieldSchema& f : shardSetFields()) {
    if (f.path.starts_with(prefix)) out[f.path] = &f;
  }
  return out;
}

// The paths of a JSON value, with the type each holds.
void walkJson(const Json& value, const std::string& path, std::map<std::string, JsonType>& out) {
  if (value.is_object()) {
    out[path] = JsonType::Object;
    for (const auto& [key, child] : value.items()) {
      walkJson(child, std::string(path).append(".").append(key), out);
    }
  } else if (value.is_array()) {
    out[path] = JsonType::Array;
    for (const Json& item : value) walkJson(item, path + "[]", out);
  } else if (value.is_string()) {
    out[path] = JsonType::String;
  } else if (value.is_boolean()) {
    out[path] = JsonType::Boolean;
  } else if (value.is_number_integer()) {
    out[path] = JsonType::Integer;
  } else if (value.is_number()) {
    out[path] = JsonType::Number;
  }
}

std::set<std::string> keys(const auto& map) {
  std::set<std::string> out;
  for (const auto& [k, v] : map) out.insert(k);
  return out;
}

TEST(CrdSchema, KnowsExactlyTheFieldsOfTheTypes) {
  const auto schema = schemaFields();
  const auto types = typeFields();
  for (const auto& path : keys(types)) {
    EXPECT_TRUE(schema.contains(path)) << path << " is in the types but not in the CRD schema";
  }
  for (const auto& path : keys(schema)) {
    EXPECT_TRUE(types.contains(path)) << path << " is in the CRD schema but not in the types";
  }
}

TEST(CrdSchema, AgreesWithTheTypesOnTypesBoundsEnumsAndDefaults) {
  const auto schema = schemaFields();
  for (const auto& [path, field] : typeFields()) {
    auto it = schema.find(path);
    if (it == schema.end()) continue;  // reported above
    const Json& node = it->second;
    EXPECT_EQ(node.value("type", ""), toString(field->type)) << path;
    const bool schema_min = node.contains("minimum");
    EXPECT_EQ(schema_min, field->minimum.has_value())
        << path << ": minimum stated on one side only";
    if (schema_min && field->minimum) {
      EXPECT_EQ(node["minimum"], *field->minimum) << path;
    }
    const bool schema_max = node.contains("maximum");
    EXPECT_EQ(schema_max, field->maximum.has_value())
        << path << ": maximum stated on one side only";
    if (schema_max && field->maximum) {
      EXPECT_EQ(node["maximum"], *field->maximum) << path;
    }
    std::vector<std::string> schema_enum;
    for (const Json& v : node.value("enum", Json::array())) schema_enum.push_back(v.dump());
    std::vector<std::string> type_enum;
    type_enum.reserve(field->enum_values.size());
    for (const std::string& v : field->enum_values) type_enum.push_back(Json(v).dump());
    EXPECT_EQ(schema_enum, type_enum) << path << ": enum";
    EXPECT_EQ(node.contains("default"), field->default_value.has_value())
        << path << ": default stated on one side only";
    if (node.contains("default") && field->default_value) {
      EXPECT_EQ(node["default"], Json::parse(*field->default_value)) << path << ": default";
    }
    EXPECT_EQ(node.value("x-kubernetes-preserve-unknown-fields", false),
              field->preserves_unknown_fields)
        << path << ": x-kubernetes-preserve-unknown-fields";
  }
}

// `kubectl explain shardset...` is the API reference: every field says what it does, and states
// its default, its bounds and its allowed values, as the schema enforces them.
TEST(CrdSchema, EveryFieldIsDescribedWithItsDefaultBoundsAndValues) {
  const Json schema = crdSchema();
  EXPECT_FALSE(schema.value("description", "").empty()) << "the ShardSet itself";
  const auto text = [](const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (const auto& [path, node] : schemaFields()) {
    const std::string d = node.value("description", "");
    EXPECT_FALSE(d.empty()) << path << " has no description";
    if (d.empty()) continue;
    if (node.contains("default")) {
      EXPECT_NE(d.find("Default: " + text(node["default"])), std::string::npos)
          << path << ": the description does not state the default " << node["default"];
    }
    for (const char* bound : {"minimum", "maximum", "maxLength"}) {
      if (!node.contains(bound)) continue;
      EXPECT_NE(d.find(text(node[bound])), std::string::npos)
          << path << ": the description does not state its " << bound << " " << node[bound];
    }
    for (const Json& value : node.value("enum", Json::array())) {
      EXPECT_NE(d.find(text(value)), std::string::npos)
          << path << ": the description does not name the value " << value;
    }
  }
}

TEST(CrdSchema, TheRequiredSpecFieldsAreOnesTheTypesRead) {
  const Json schema = crdSchema();
  const auto types = typeFields("spec");
  for (const Json& required : schema.at("properties").at("spec").value("required", Json::array())) {
    EXPECT_TRUE(types.contains("spec." + required.get<std::string>())) << required;
  }
}

ShardSetSpec fullSpec() {
  ShardSetSpec spec;
  spec.target_ref = {"Prometheus", "main"};
  spec.shards = 3;
  spec.min_shards = 1;
  spec.max_shards = 10;
  spec.shard_retention_policy = {"Retain", {"3d"}};
  spec.shard_retention_policy.drain = DrainSpec{.enabled = true,
                                                .prometheus_url = "http://meta:9090",
                                                .condition = "x{pod=~\"$POD_REGEX\"}",
                                                .max_lag_seconds = 60,
                                                .timeout_seconds = 3600,
                                                .on_timeout = "Keep"};
  spec.ingestion = IngestionSpec{"http://prom:9090", "up", "30s", 1000};
  spec.resharding = "LowChurn";
  return spec;
}

ShardSetStatus fullStatus() {
  ShardSetStatus status;
  status.target_shards = 3;
  status.retained_shards = {{.index = 5,
                             .stateful_set = "prometheus-main-shard-5",
                             .deletion_timestamp = "2026-11-25T10:00:00Z",
                             .phase = "Draining",
                             .lag_seconds = 12.5,
                             .draining_since = "2026-11-25T10:00:01Z",
                             .drained_at = "2026-11-25T10:05:00Z"}};
  status.retained_count = 1;
  status.draining_count = 1;
  status.unacknowledged_pauses = 2;
  status.recommended_shards = 4;
  status.ingestion = IngestionStatus{1.5, {{0, 1.5}}, "2026-11-22T10:00:00Z", ""};
  status.conditions = {{"Ready", "True", "ShardsReady", "m", "2026-11-01T00:00:00Z", 4}};
  return status;
}

// The field table lists exactly what the encoders write, with the JSON types they write.
TEST(ShardSetFields, AreExactlyWhatTheEncodersWrite) {
  std::map<std::string, JsonType> written;
  walkJson(toJson(fullSpec()), "spec", written);
  walkJson(toJson(fullStatus()), "status", written);
  const auto types = typeFields();
  EXPECT_EQ(keys(written), keys(types));
  for (const auto& [path, type] : written) {
    auto it = types.find(path);
    if (it == types.end()) continue;
    // A whole number written for a "number" field (0 samples/s) is still a number.
    if (!(type == JsonType::Integer && it->second->type == JsonType::Number)) {
      EXPECT_EQ(toString(type), toString(it->second->type)) << path;
    }
  }
}

// The decoder reads every spec field of the table: each, given a value of another JSON type, is
// reported under its own path.
TEST(ShardSetFields, TheDecoderReadsEverySpecField) {
  for (const auto& [path, field] : typeFields("spec.")) {
    Json object{{"metadata", {{"name", "main"}}}, {"spec", toJson(fullSpec())}};
    Json* at = &object;
    std::string rest = path;
    while (true) {
      const auto dot = rest.find('.');
      at = &(*at)[rest.substr(0, dot)];
      if (dot == std::string::npos) break;
      rest = rest.substr(dot + 1);
    }
    *at = field->type == JsonType::Boolean ? Json(1.5) : Json(true);
    auto decoded = decodeShardSet(object);
    ASSERT_TRUE(decoded.has_value()) << path;
    std::vector<std::string> reported;
    for (const auto* errors : {&decoded->spec_errors, &decoded->ingestion_errors}) {
      for (const FieldError& e : *errors) reported.push_back(e.field);
    }
    EXPECT_EQ(reported, std::vector<std::string>{path}) << path;
  }
  auto decoded =
      decodeShardSet(Json{{"metadata", {{"name", "main"}}}, {"spec", toJson(fullSpec())}});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded->spec_errors.empty());
  EXPECT_TRUE(decoded->ingestion_errors.empty());
  EXPECT_EQ(toJson(decoded->spec), toJson(fullSpec()));
}

}  // namespace
}  // namespace shardscaler::api
