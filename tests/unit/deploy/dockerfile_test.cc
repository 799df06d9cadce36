// deploy/Dockerfile cannot be built in the tests (no container engine), so these check what can be
// checked without one: Debian 12 images, the build through hack/lib.sh's package list and
// hack/test.sh's build type, a runtime stage with the package of every library the shardscaler
// binary built here links (this machine is Debian 12 too), and the user the Deployment expects.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

std::string dockerfile() { return readFile(deployDir() / "Dockerfile"); }

// The Dockerfile's logical lines (continuations joined), comments dropped.
std::vector<std::string> instructions() {
  std::vector<std::string> out;
  std::istringstream in(dockerfile());
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    if (line.ends_with("\\")) {
      current += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    current += line;
    if (current.find_first_not_of(" \t") != std::string::npos) out.push_back(current);
    current.clear();
  }
  return out;
}

std::vector<std::string> instructionsOf(const std::string& keyword) {
  std::vector<std::string> out;
  for (const auto& i : instructions()) {
    if (i.starts_with(keyword + " ")) out.push_back(i.substr(keyword.size() + 1));
  }
  return out;
}

TEST(DockerfileTest, BuildsAndRunsOnDebian12) {
  const auto froms = instructionsOf("FROM");
  ASSERT_EQ(froms.size(), 2u) << "a build stage and a runtime stage";
  EXPECT_EQ(froms[0], "debian:bookworm AS build");
  EXPECT_EQ(froms[1], "debian:bookworm-slim");
}

// The first -DCMAKE_BUILD_TYPE=... in `text`, or "" when there is none.
std::string buildTypeIn(const std::string& text) {
  static const std::regex kBuildType("-DCMAKE_BUILD_TYPE=([A-Za-z]+)");
  std::smatch match;
  return std::regex_search(text, match, kBuildType) ? match[1].str() : std::string();
}

TEST(DockerfileTest, BuildStageUsesThePackagesAndBuildTypeOfTheProjectsBuild) {
  const std::string text = dockerfile();
  EXPECT_NE(text.find("source hack/lib.sh"), std::string::npos);
  // The build packages only: no test servers, linters or test libraries in the build stage.
  EXPECT_NE(text.find("ensure_packages \"${SHARDSCALER_BUILD_PACKAGES[@]}\""), std::string::npos);
  EXPECT_EQ(text.find("SHARDSCALER_PACKAGES"), std::string::npos);
  EXPECT_EQ(text.find("SHARDSCALER_TEST_PACKAGES"), std::string::npos);
  EXPECT_NE(text.find("-G Ninja"), std::string::npos);
  const std::string in_dockerfile = buildTypeIn(text);
  ASSERT_NE(in_dockerfile, "");
  // The project's own build (the demo's and the test command's) is configure_main_build's.
  const std::string lib = readFile(sourceDir() / "hack/lib.sh");
  const auto main_build = lib.find("configure_main_build() {");
  ASSERT_NE(main_build, std::string::npos) << "hack/lib.sh defines no configure_main_build";
  EXPECT_EQ(in_dockerfile, buildTypeIn(lib.substr(main_build)))
      << "hack/lib.sh's configure_main_build builds another type";
  EXPECT_NE(readFile(sourceDir() / "hack/test.sh").find("configure_main_build"), std::string::npos)
      << "hack/test.sh builds without configure_main_build";
}

// Packages of the runtime stage's apt-get install.
std::set<std::string> runtimePackages() {
  std::set<std::string> out;
  const auto runs = instructionsOf("RUN");
  const std::string& last = runs.back();
  const auto install = last.find("apt-get install");
  EXPECT_NE(install, std::string::npos) << "the last RUN installs the runtime packages";
  std::istringstream words(last.substr(install));
  std::string word;
  while (words >> word && word != "&&") {
    if (!word.starts_with("-") && word != "apt-get" && word != "install") out.insert(word);
  }
  return out;
}

TEST(DockerfileTest, RuntimeStageHasThePackageOfEveryLibraryTheBinaryLinks) {
  if (runCommand({"dpkg", "--version"}).exit_code != 0) GTEST_SKIP() << "not a Debian system";
  // Only a binary built as the image builds it links the same libraries (a Debug or sanitizer
  // build adds libasan, libubsan, libboost_system).
  const std::string image_build_type = buildTypeIn(dockerfile());
  if (SHARDSCALER_SANITIZED || image_build_type != SHARDSCALER_BUILD_TYPE) {
    GTEST_SKIP() << "this build (" << SHARDSCALER_BUILD_TYPE
                 << (SHARDSCALER_SANITIZED ? ", sanitizers" : "") << ") is not the image's ("
                 << image_build_type << ")";
  }
  auto objdump = runCommand({"objdump", "-p", shardscalerBinary().string()});
  ASSERT_EQ(objdump.exit_code, 0) << objdump.err;
  std::vector<std::string> needed;
  std::istringstream lines(objdump.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key, value;
    if (words >> key >> value && key == "NEEDED") needed.push_back(value);
  }
  ASSERT_FALSE(needed.empty());
  // In every Debian image: apt itself depends on them.
  std::set<std::string> available = {"libc6", "libgcc-s1", "libstdc++6"};
  available.merge(runtimePackages());
  for (const auto& library : needed) {
    auto owner = runCommand({"dpkg", "-S", "*/" + library});
    ASSERT_EQ(owner.exit_code, 0) << library << ": " << owner.err;
    // "libcurl4:amd64: /usr/lib/x86_64-linux-gnu/libcurl.so.4"; skip other architectures.
    std::istringstream owners(owner.out);
    std::string package;
    bool covered = false;
    std::vector<std::string> seen;
    while (std::getline(owners, line)) {
      package = line.substr(0, line.find(':'));
      if (line.find("/lib32/") != std::string::npos || line.find("/libx32/") != std::string::npos)
        continue;
      seen.push_back(package);
      covered = covered || available.contains(package);
    }
    EXPECT_TRUE(covered) << library << " comes from " << ::testing::PrintToString(seen)
                         << ", which the runtime stage does not install";
  }
}

TEST(DockerfileTest, RunsAsTheNonRootUserOfTheDeployment) {
  const auto users = instructionsOf("USER");
  ASSERT_EQ(users.size(), 1u);
  const ShardscalerPod p = shardscalerPod(shardscalerInstalls()[0]);
  const auto uid = p.pod_spec["securityContext"].value("runAsUser", -1);
  EXPECT_EQ(users[0], std::to_string(uid) + ":" + std::to_string(uid));
  EXPECT_NE(uid, 0);
  // The image's entrypoint is the binary; the Deployment's args start with the command.
  EXPECT_EQ(instructionsOf("ENTRYPOINT"),
            std::vector<std::string>{"[\"/usr/local/bin/shardscaler\"]"});
  EXPECT_EQ(p.container["args"][0], "run");
}

}  // namespace
}  // namespace shardscaler::deploy_test
