// `kubectl explain` is the ShardSet API's reference: against the real API server (1.20), with the
// CRD of deploy/crds installed, every field of spec and status explains with the description the
// CRD gives it, and `kubectl explain shardset.spec.shardRetentionPolicy` and `shardset.status`
// list every field under them with its description. `kubectl get` shows the Target and Ready
// columns; minShards above maxShards is reported by shardscaler (1.20 has no CEL rules).
#include <gmock/gmock.h>

#include <fstream>
#include <map>

#include "../unit/deploy/yaml_json.h"
#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {
namespace {

using ::testing::HasSubstr;

// Words only: kubectl wraps and indents descriptions.
std::string words(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

Json crdSchema() {
  std::ifstream in(sourceDir() / "deploy/crds/shardscaler.io_shardsets.yaml");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return deploy_test::yamlStreamToJson(text).at(
      0)["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

// Every field under spec and status, by the path kubectl explain takes ("spec.targetRef.kind";
// a list's item fields follow the list's name).
void walk(const Json& node, const std::string& path, std::map<std::string, Json>& out) {
  out[path] = node;
  const Json& fields = node.contains("items") ? node["items"] : node;
  const Json properties = fields.value("properties", Json::object());
  for (const auto& [key, child] : properties.items()) {
    walk(child, std::string(path).append(".").append(key), out);
  }
}

std::map<std::string, Json> fields() {
  const Json schema = crdSchema();
  std::map<std::string, Json> out;
  for (const char* top : {"spec", "status"}) walk(schema["properties"][top], top, out);
  return out;
}

KubectlResult explain(const std::string& path) { return kubectl("explain shardset." + path); }

// The API server publishes a new CRD's schema in its OpenAPI document a few seconds after the CRD
// is established; kubectl explain reads that document.
::testing::AssertionResult waitForPublishedSchema() {
  (void)cluster();
  std::string last;
  if (test_kit::eventually(
          std::chrono::seconds(90), kPoll,
          [](std::string* seen) {
            const auto r = kubectl("explain shardset.spec.targetRef");
            *seen = r.err;
            return r.exit_code == 0;
          },
          &last)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "kubectl explain shardset never worked: " << last;
}

TEST(ApiReferenceTest, EveryFieldExplainsWithItsDescription) {
  ASSERT_TRUE(waitForPublishedSchema());
  for (const auto& [path, node] : fields()) {
    const auto r = explain(path);
    ASSERT_EQ(r.exit_code, 0) << path << ": " << r.err;
    const std::string description = node.value("description", "");
    ASSERT_FALSE(description.empty()) << path;
    EXPECT_THAT(words(r.out), HasSubstr(words(description))) << "kubectl explain shardset." << path;
  }
}

TEST(ApiReferenceTest, RetentionPolicyAndStatusListEveryFieldWithItsDescription) {
  ASSERT_TRUE(waitForPublishedSchema());
  const auto all = fields();
  for (const std::string parent : {"spec.shardRetentionPolicy", "status"}) {
    const auto r = explain(parent);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string listed = words(r.out.substr(r.out.find("FIELDS:")));
    for (const auto& [key, child] : all.at(parent)["properties"].items()) {
      EXPECT_THAT(listed, HasSubstr(key)) << parent;
      // The first sentence at least: kubectl shortens nothing, but a long one is checked whole
      // by the test above.
      const std::string description = words(child.value("description", ""));
      EXPECT_THAT(listed,
                  HasSubstr(description.substr(0, std::min<size_t>(60, description.size()))))
          << parent << "." << key;
    }
  }
}

class ApiColumnsTest : public ShardSetScenario {};

TEST_F(ApiColumnsTest, KubectlGetShowsTargetAndReadyAndMinAboveMaxIsInvalid) {
  createPrometheus(1);
  applyShardSet({.shards = 1});
  ASSERT_TRUE(waitForSettled(1, 0));
  auto r = kubectl("get shardsets -n " + ns_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("TARGET"));
  EXPECT_THAT(r.out, HasSubstr("READY"));
  ASSERT_TRUE(waitFor("READY True", [&](std::string* seen) {
    auto line = kubectl("get shardset main -n " + ns_ + " --no-headers");
    *seen = line.out;
    return line.out.find("main ") == 0 && line.out.find(" True ") != std::string::npos &&
           line.out.find(" main ") != std::string::npos;
  }));
  auto wide = kubectl("get shardsets -n " + ns_ + " -o wide");
  EXPECT_THAT(wide.out, HasSubstr("Prometheus"));

  // Kubernetes 1.20 cannot compare two fields: the API server takes it, shardscaler refuses it.
  applyShardSet({.shards = 1, .min_shards = 5, .max_shards = 3});
  ASSERT_TRUE(waitFor("Degraded InvalidSpec", [&](std::string* seen) {
    const auto degraded = condition("Degraded");
    *seen = degraded ? degraded->dump() : "no Degraded condition";
    return degraded && degraded->value("reason", "") == "InvalidSpec" &&
           degraded->value("message", "").find("spec.maxShards") != std::string::npos;
  }));
  EXPECT_EQ(prometheus()["spec"]["shards"], 1);
}

TEST(ApiReferenceTest, AnUnknownTargetKindIsRefusedByTheApiServer) {
  const std::string ns = createNamespace("kinds");
  const auto r = kubectl("apply -f -",
                         "apiVersion: shardscaler.io/v1alpha1\nkind: ShardSet\nmetadata: {name: "
                         "x, namespace: " +
                             ns + "}\nspec: {targetRef: {kind: Thanos, name: main}, shards: 1}\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("spec.targetRef.kind"));
  EXPECT_THAT(r.err, HasSubstr("Thanos"));
}

}  // namespace
}  // namespace shardscaler::e2e
