// What a release is made of, checked without a cluster: one version (VERSION) that the binary,
// the image and the rendered manifests share and the CHANGELOG describes, the licence, and
// release manifests that only opt-in components can make hurt a cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "manifests.h"

namespace shardscaler::deploy_test {
namespace {

std::string version() {
  std::string v = readFile(sourceDir() / "VERSION");
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

TEST(ReleaseTest, TheBinaryIsTheVersionOfVersionFile) {
  ASSERT_TRUE(std::regex_match(version(), std::regex(R"(\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?)")))
      << "VERSION holds " << version();
  const CommandResult r = runCommand({shardscalerBinary().string(), "version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("shardscaler " + version() + " (commit ", 0), 0u) << r.out;
}

TEST(ReleaseTest, TheChangelogHasASectionForTheVersion) {
  const std::string changelog = readFile(sourceDir() / "CHANGELOG.md");
  EXPECT_NE(changelog.find("keepachangelog.com"), std::string::npos);
  EXPECT_NE(changelog.find("## [Unreleased]"), std::string::npos);
  EXPECT_TRUE(std::regex_search(
      changelog,
      std::regex("\n## \\[" + std::regex_replace(version(), std::regex(R"(\.)"), R"(\.)") +
                 R"(\] - \d{4}-\d{2}-\d{2}\n)")))
      << "CHANGELOG.md has no \"## [" << version() << "] - YYYY-MM-DD\" section";
}

TEST(ReleaseTest, TheLicenceIsApache2) {
  const std::string licence = readFile(sourceDir() / "LICENSE");
  EXPECT_NE(licence.find("Apache License"), std::string::npos);
  EXPECT_NE(licence.find("Version 2.0, January 2004"), std::string::npos);
  EXPECT_NE(licence.find("END OF TERMS AND CONDITIONS"), std::string::npos);
}

std::vector<std::filesystem::path> releaseFiles() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(deployDir() / "release")) {
    if (entry.path().extension() == ".yaml") out.push_back(entry.path());
  }
  std::ranges::sort(out);
  return out;
}

// Every release manifest names the image REGISTRY/shardscaler:VERSION, and none of them ships what
// can change how the cluster's other workloads are served: an APIService (shardscaler registers
// its own, only where none exists), a NetworkPolicy or a PodDisruptionBudget (opt-in components).
TEST(ReleaseTest, EveryFlavourNamesTheVersionedImageAndShipsNothingThatCanHurt) {
  const auto files = releaseFiles();
  ASSERT_EQ(files.size(), 5u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    int images = 0;
    for (const Json& object : yamlDocuments(readFile(file))) {
      const std::string kind = object.value("kind", "");
      EXPECT_NE(kind, "APIService");
      EXPECT_NE(kind, "NetworkPolicy");
      EXPECT_NE(kind, "PodDisruptionBudget");
      if (kind != "Deployment") continue;
      for (const Json& c : object["spec"]["template"]["spec"]["containers"]) {
        if (c.value("name", "") != "shardscaler") continue;
        ++images;
        EXPECT_EQ(c.value("image", ""), "REGISTRY/shardscaler:" + version());
      }
    }
    EXPECT_EQ(images, 1) << "shardscaler containers";
  }
}

// hack/release.sh --registry renders a flavour for the user's registry (README's one command).
TEST(ReleaseTest, OneCommandRendersAFlavourForYourRegistry) {
  const CommandResult r = runCommand({(sourceDir() / "hack/release.sh").string(), "--registry",
                                      "registry.example.com/team", "standalone"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("image: registry.example.com/team/shardscaler:" + version()),
            std::string::npos);
  EXPECT_EQ(r.out.find("REGISTRY/"), std::string::npos);
  const CommandResult bad = runCommand(
      {(sourceDir() / "hack/release.sh").string(), "--registry", "Not A Registry", "standalone"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("is not a registry host"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace shardscaler::deploy_test
