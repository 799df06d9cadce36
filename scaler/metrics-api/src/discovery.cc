#include "shardscaler/metrics_api/discovery.h"

#include <openssl/evp.h>

#include "shardscaler/metrics_api/external_metrics.h"

namespace shardscaler::metrics_api {
namespace {

using Json = nlohmann::json;

std::string sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

Json groupVersionForDiscovery() { return {{"groupVersion", kGroupVersion}, {"version", kVersion}}; }

// The definitions use the names apimachinery's OpenAPI generator gives these types, so that
// the aggregated document reads like the one prometheus-adapter or KEDA would publish.
constexpr const char* kValueDefinition =
    "io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValue";
constexpr const char* kListDefinition =
    "io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueList";

Json buildOpenApi() {
  Json paths = Json::object();
  paths["/apis/" + std::string(kGroupVersion) + "/"] = {
      {"get",
       {{"description", "the metrics shardscaler serves"},
        {"produces", {"application/json"}},
        {"schemes", {"https"}},
        {"operationId", "getExternalMetricsAPIResources"},
        {"responses",
         {{"200",
           {{"description", "OK"},
            {"schema",
             {{"$ref", "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"}}}}},
          {"401", {{"description", "Unauthorized"}}}}}}}};
  for (const MetricInfo& m : metricInfos()) {
    const std::string path =
        "/apis/" + std::string(kGroupVersion) + "/namespaces/{namespace}/" + std::string(m.name);
    paths[path] = {{"get",
                    {{"description", m.description},
                     {"produces", {"application/json"}},
                     {"schemes", {"https"}},
                     {"operationId", "listNamespaced_" + std::string(m.name)},
                     {"parameters",
                      {{{"name", "namespace"},
                        {"in", "path"},
                        {"required", true},
                        {"type", "string"},
                        {"uniqueItems", true},
                        {"description", "namespace of the ShardSets"}},
                       {{"name", "labelSelector"},
                        {"in", "query"},
                        {"type", "string"},
                        {"uniqueItems", true},
                        {"description", "selects ShardSets by the label shardset=<name>"}}}},
                     {"responses",
                      {{"200",
                        {{"description", "OK"},
                         {"schema", {{"$ref", std::string("#/definitions/") + kListDefinition}}}}},
                       {"401", {{"description", "Unauthorized"}}},
                       {"403", {{"description", "Forbidden"}}},
                       {"404", {{"description", "no ShardSet matches the selector"}}},
                       {"503", {{"description", "the rates are missing, failed or stale"}}}}},
                     {"x-kubernetes-action", "list"}}}};
  }
  Json definitions = Json::object();
  definitions[kValueDefinition] = {
      {"description", "one metric series: a ShardSet's value"},
      {"type", "object"},
      {"required", {"metricName", "metricLabels", "timestamp", "value"}},
      {"properties",
       {{"metricName", {{"type", "string"}}},
        {"metricLabels", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}},
        {"timestamp", {{"type", "string"}, {"format", "date-time"}}},
        {"window", {{"type", "integer"}, {"format", "int64"}}},
        {"value", {{"type", "string"}}}}}};
  definitions[kListDefinition] = {
      {"description", "the values of one metric"},
      {"type", "object"},
      {"required", {"items"}},
      {"properties",
       {{"apiVersion", {{"type", "string"}}},
        {"kind", {{"type", "string"}}},
        {"metadata", {{"type", "object"}}},
        {"items",
         {{"type", "array"},
          {"items", {{"$ref", std::string("#/definitions/") + kValueDefinition}}}}}}},
      {"x-kubernetes-group-version-kind",
       {{{"group", kGroup}, {"version", kVersion}, {"kind", "ExternalMetricValueList"}}}}};
  definitions["io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"] = {
      {"description", "the resources of a group version"},
      {"type", "object"},
      {"required", {"groupVersion", "resources"}},
      {"properties",
       {{"groupVersion", {{"type", "string"}}},
        {"resources", {{"type", "array"}, {"items", {{"type", "object"}}}}}}}};
  return {{"swagger", "2.0"},
          {"info", {{"title", "shardscaler external metrics"}, {"version", kVersion}}},
          {"paths", std::move(paths)},
          {"definitions", std::move(definitions)}};
}

}  // namespace

Json apiResourceList() {
  Json resources = Json::array();
  for (const MetricInfo& m : metricInfos()) {
    resources.push_back({{"name", m.name},
                         {"singularName", ""},
                         {"namespaced", true},
                         {"kind", "ExternalMetricValueList"},
                         {"verbs", {"get"}}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", kGroupVersion},
          {"resources", std::move(resources)}};
}

Json apiGroup() {
  return {{"kind", "APIGroup"},
          {"apiVersion", "v1"},
          {"name", kGroup},
          {"versions", {groupVersionForDiscovery()}},
          {"preferredVersion", groupVersionForDiscovery()}};
}

Json apiGroupList() {
  Json group = apiGroup();
  group.erase("kind");
  group.erase("apiVersion");
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", {std::move(group)}}};
}

const OpenApiDocument& openApiV2() {
  static const OpenApiDocument document = [] {
    OpenApiDocument d;
    d.body = buildOpenApi().dump();
    d.etag = "\"" + sha256Hex(d.body) + "\"";
    return d;
  }();
  return document;
}

}  // namespace shardscaler::metrics_api
