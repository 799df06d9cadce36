// docs/api.md is the CRD's reference as generated from deploy/crds, so that the page and
// `kubectl explain` say the same. SHARDSCALER_UPDATE_GOLDEN=1 rewrites it (review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "api_reference.h"
#include "manifests.h"

namespace shardscaler::deploy_test {
namespace {

Json crd() {
  const auto docs = yamlDocuments(readFile(deployDir() / "crds/shardscaler.io_shardsets.yaml"));
  if (docs.size() != 1) throw std::runtime_error("expected one document in deploy/crds");
  return docs[0];
}

TEST(ApiReferenceTest, DocsApiMdIsGeneratedFromTheCrd) {
  const std::string generated = apiReference(crd());
  const auto path = sourceDir() / "docs/api.md";
  const char* update = std::getenv("SHARDSCALER_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << generated;
    GTEST_SKIP() << "rewrote " << path;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; run with "
                                             << "SHARDSCALER_UPDATE_GOLDEN=1 to write it";
  EXPECT_EQ(readFile(path), generated)
      << "docs/api.md is not what deploy/crds generates; run this test with "
         "SHARDSCALER_UPDATE_GOLDEN=1 and commit the result";
}

TEST(ApiReferenceTest, ListsEveryFieldWithItsDescription) {
  const std::string page = apiReference(crd());
  for (const char* row :
       {"| `spec.targetRef.kind` | string |  | required; one of: Prometheus, PrometheusAgent |",
        "| `spec.minShards` | integer (int32) | `1` | 1 to 1000 |",
        "| `spec.shardRetentionPolicy.drain.onTimeout` | string | `Keep` | one of: Keep, Delete |",
        "| `status.retainedShards[].phase` | string |  | one of: Retained, Draining, Deleting |",
        "| `status.conditions` | []object |",
        "| Ready | `.status.conditions[?(@.type==\"Ready\")].status` |",
        "| `spec.replicas` | `.spec.shards` |"}) {
    EXPECT_NE(page.find(row), std::string::npos) << row;
  }
}

}  // namespace
}  // namespace shardscaler::deploy_test
