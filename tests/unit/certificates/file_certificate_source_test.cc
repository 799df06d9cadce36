// FileCertificateSource over a directory laid out as the kubelet mounts a Secret (files that are
// symlinks into a "..data" directory swapped atomically): loads, picks up a swap, and keeps the
// last good certificate through a torn or broken update, naming the file at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "shardscaler/certificates/file_certificate_source.h"
#include "shardscaler/test_kit/temp_dir.h"
#include "tls_test_support.h"

namespace shardscaler::certificates {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FileCertificateSourceTest : public ::testing::Test {
 protected:
  static void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  // Writes a new "..data" generation and swaps the symlink to it, as the kubelet does.
  void mount(const std::string& cert, const std::string& key, const std::string& ca) {
    const fs::path generation = dir_ / ("..gen" + std::to_string(++generation_));
    fs::create_directory(generation);
    write(generation / "tls.crt", cert);
    write(generation / "tls.key", key);
    if (!ca.empty()) write(generation / "ca.crt", ca);
    const fs::path next = dir_ / "..data_tmp";
    fs::create_directory_symlink(generation.filename(), next);
    fs::rename(next, dir_ / "..data");
    for (const char* name : {"tls.crt", "tls.key", "ca.crt"}) {
      if (!fs::is_symlink(dir_ / name)) fs::create_symlink(fs::path("..data") / name, dir_ / name);
    }
  }
  void mount(const testing::TestPki& pki) {
    mount(pki.serving->chainPem(), pki.serving->keyPem(), pki.ca.certificate().pem());
  }
  FileCertificateSourceOptions options() {
    FileCertificateSourceOptions o;
    o.directory = dir_;
    o.poll_period = std::chrono::seconds(10);
    o.degraded = [this](std::string_view reason) { reasons_.emplace_back(reason); };
    return o;
  }
  std::string fingerprint(const FileCertificateSource& source) {
    auto current = source.current();
    return current ? current->leaf().fingerprint() : "";
  }

  test_kit::TempDir tmp_{"serving-files-"};
  const fs::path dir_ = tmp_.path();
  int generation_ = 0;
  std::vector<std::string> reasons_;
  std::shared_ptr<k8s::ManualClock> clock_ = std::make_shared<k8s::ManualClock>();
};

TEST_F(FileCertificateSourceTest, LoadsAMountedSecretAndFollowsItsSwaps) {
  const auto first = testing::makeTestPki("first");
  mount(first);
  FileCertificateSource source(clock_, options());
  ASSERT_TRUE(source.reload().has_value());
  EXPECT_EQ(fingerprint(source), first.serving->leaf().fingerprint());
  ASSERT_EQ(source.current()->caBundle().size(), 1U);

  const auto second = testing::makeTestPki("second");
  mount(second);
  ASSERT_TRUE(source.reload().has_value());
  EXPECT_EQ(fingerprint(source), second.serving->leaf().fingerprint());
  EXPECT_TRUE(reasons_.empty());
}

TEST_F(FileCertificateSourceTest, ABrokenUpdateKeepsTheLastGoodCertificateAndNamesTheFile) {
  const auto good = testing::makeTestPki("good");
  mount(good);
  FileCertificateSource source(clock_, options());
  ASSERT_TRUE(source.reload().has_value());

  const auto other = testing::makeTestPki("other");
  mount(other.serving->chainPem(), good.serving->keyPem(), "");  // torn: new cert, old key
  auto torn = source.reload();
  ASSERT_FALSE(torn.has_value());
  EXPECT_THAT(torn.error(), HasSubstr((dir_ / "tls.key").string() + " does not belong to " +
                                      (dir_ / "tls.crt").string()));
  EXPECT_EQ(fingerprint(source), good.serving->leaf().fingerprint());

  mount("not pem", good.serving->keyPem(), "");
  auto garbage = source.reload();
  ASSERT_FALSE(garbage.has_value());
  EXPECT_THAT(garbage.error(), HasSubstr((dir_ / "tls.crt").string() + ": certificate: no PEM"));
  EXPECT_EQ(reasons_.size(), 2U);
  EXPECT_EQ(reasons_.front(), "certificate_files_unusable");
  EXPECT_EQ(fingerprint(source), good.serving->leaf().fingerprint());
}

TEST_F(FileCertificateSourceTest, ACaFileIsOptionalAndMissingFilesAreNamed) {
  FileCertificateSource source(clock_, options());
  auto missing = source.reload();
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error(), HasSubstr((dir_ / "tls.crt").string() + ": cannot be read"));
  EXPECT_EQ(source.current(), nullptr);
  const auto pki = testing::makeTestPki();
  mount(pki.serving->chainPem(), pki.serving->keyPem(), "");
  ASSERT_TRUE(source.reload().has_value());
  EXPECT_TRUE(source.current()->caBundle().empty());
}

TEST_F(FileCertificateSourceTest, TheBackgroundLoopPicksUpAChange) {
  const auto first = testing::makeTestPki("first");
  mount(first);
  FileCertificateSource source(clock_, options());
  source.start();
  ASSERT_TRUE(clock_->awaitWaiters(1, std::chrono::seconds(10)));
  EXPECT_EQ(fingerprint(source), first.serving->leaf().fingerprint());
  const auto second = testing::makeTestPki("second");
  mount(second);
  clock_->advance(std::chrono::seconds(10));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fingerprint(source) != second.serving->leaf().fingerprint() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(fingerprint(source), second.serving->leaf().fingerprint());
  source.stop();
}

}  // namespace
}  // namespace shardscaler::certificates
