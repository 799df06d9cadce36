// Every kustomization under deploy/ renders with `kubectl kustomize`, and its output is the one in
// tests/golden/deploy/<dir>.yaml. SHARDSCALER_UPDATE_GOLDEN=1 rewrites the golden files instead
// (review the diff). The ShardSet CRD itself is compared by content, against deploy/crds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "manifests.h"

namespace shardscaler::deploy_test {
namespace {

bool updatingGolden() {
  const char* v = std::getenv("SHARDSCALER_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::filesystem::path goldenFile(const std::string& dir) { return goldenDir() / (dir + ".yaml"); }

class RenderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RenderTest, MatchesGoldenFile) {
  const std::string& dir = GetParam();
  const Rendering& rendering = render(dir);
  ASSERT_FALSE(rendering.objects.empty()) << "deploy/" << dir << " renders nothing";
  const std::string actual = goldenText(rendering);
  const auto path = goldenFile(dir);
  if (updatingGolden()) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run with SHARDSCALER_UPDATE_GOLDEN=1 to write it";
  EXPECT_EQ(actual, readFile(path))
      << "kubectl kustomize deploy/" << dir << " differs from " << path
      << "; if the change is intended, run with SHARDSCALER_UPDATE_GOLDEN=1 and review the diff";
}

std::string testName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Deploy, RenderTest, ::testing::ValuesIn(kustomizationDirs()), testName);

TEST(RenderSetTest, CoversTheExpectedKustomizations) {
  // A folder that silently stopped being a kustomization would drop out of the tests above.
  const auto found = kustomizationDirs();
  const std::set<std::string> dirs(found.begin(), found.end());
  for (const char* expected :
       {"base", "crds", "examples", "examples/autoscaling-v2beta2",
        "examples/network-policy/host-network", "examples/network-policy/konnectivity-sidecar",
        "examples/network-policy/pod-network-namespaced", "examples/pod-disruption-budget",
        "metrics-api", "monitoring", "overlays/cert-manager", "overlays/external-metrics",
        "overlays/monitoring", "overlays/namespaced", "overlays/prometheus-operator-sidecar",
        "network-policy", "webhook"}) {
    EXPECT_TRUE(dirs.contains(expected)) << "deploy/" << expected;
  }
}

TEST(RenderSetTest, EveryGoldenFileBelongsToAKustomization) {
  if (!std::filesystem::exists(goldenDir())) GTEST_SKIP() << "no golden files yet";
  const auto dirs = kustomizationDirs();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(goldenDir())) {
    if (!entry.is_regular_file()) continue;
    auto rel = std::filesystem::relative(entry.path(), goldenDir()).replace_extension();
    EXPECT_NE(std::ranges::find(dirs, rel.generic_string()), dirs.end())
        << entry.path() << " is stale: deploy/" << rel.generic_string()
        << " is not a kustomization any more";
  }
}

TEST(CrdTest, EveryRenderingCarriesTheCrdOfDeployCrdsUnchanged) {
  const auto files = yamlDocuments(readFile(deployDir() / "crds/shardscaler.io_shardsets.yaml"));
  ASSERT_EQ(files.size(), 1u);
  const Json& crd = files[0];
  for (const std::string dir : {"base", "crds", "overlays/cert-manager", "overlays/namespaced",
                                "overlays/prometheus-operator-sidecar"}) {
    SCOPED_TRACE("deploy/" + dir);
    auto rendered =
        find(render(dir).objects, "CustomResourceDefinition", "shardsets.shardscaler.io");
    ASSERT_TRUE(rendered);
    EXPECT_EQ((*rendered)["spec"], crd["spec"]);
  }
}

}  // namespace
}  // namespace shardscaler::deploy_test
