#include "shardscaler/k8s_client/validation.h"

#include <gtest/gtest.h>

#include <string>

namespace shardscaler::k8s {
namespace {

TEST(Validation, Dns1123Label) {
  for (const char* good : {"a", "0", "monitoring", "kube-system", "a1-b2"}) {
    EXPECT_TRUE(isDns1123Label(good)) << good;
  }
  EXPECT_TRUE(isDns1123Label(std::string(63, 'a')));
  for (const char* bad : {"", "-a", "a-", "A", "a.b", "a_b", "a b"}) {
    EXPECT_FALSE(isDns1123Label(bad)) << bad;
  }
  EXPECT_FALSE(isDns1123Label(std::string(64, 'a')));
}

TEST(Validation, Dns1123SubdomainLimitsTheWholeAsApimachineryDoes) {
  for (const char* good : {"a", "main", "prometheus-main.shard-0", "shardscaler.io", "1.2.3"}) {
    EXPECT_TRUE(isDns1123Subdomain(good)) << good;
  }
  const std::string label63(63, 'a');
  const std::string longest = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  ASSERT_EQ(longest.size(), 253u);
  EXPECT_TRUE(isDns1123Subdomain(longest));
  EXPECT_FALSE(isDns1123Subdomain(longest + "b"));
  // Only the whole is limited, as apimachinery's IsDNS1123Subdomain: a 64-character name is valid.
  EXPECT_TRUE(isDns1123Subdomain(std::string(64, 'a') + ".io"));
  EXPECT_TRUE(isDns1123Subdomain(std::string(200, 'a')));
  for (const char* bad : {"", ".", "a.", ".a", "a..b", "A.io", "a-.io", "a_b", "a/b"}) {
    EXPECT_FALSE(isDns1123Subdomain(bad)) << bad;
  }
}

TEST(Validation, QualifiedNameIsALabelKey) {
  for (const char* good :
       {"shardset", "app.kubernetes.io/name", "operator.prometheus.io/shard", "A_b.C-d", "x/Y"}) {
    EXPECT_TRUE(isQualifiedName(good)) << good;
  }
  EXPECT_TRUE(isQualifiedName(std::string(63, 'k')));
  for (const char* bad : {"", "/a", "a/", "a/b/c", "-a", "a_", "Upper.IO/a", "a b", "a/.b"}) {
    EXPECT_FALSE(isQualifiedName(bad)) << bad;
  }
  EXPECT_FALSE(isQualifiedName(std::string(64, 'k')));
}

TEST(Validation, LabelValueMayBeEmpty) {
  for (const char* good : {"", "main", "v1.2_3-rc", "Z"}) {
    EXPECT_TRUE(isValidLabelValue(good)) << good;
  }
  EXPECT_TRUE(isValidLabelValue(std::string(63, 'v')));
  for (const char* bad : {"-", "a/b", "a.", "_a", "a b"}) {
    EXPECT_FALSE(isValidLabelValue(bad)) << bad;
  }
  EXPECT_FALSE(isValidLabelValue(std::string(64, 'v')));
}

}  // namespace
}  // namespace shardscaler::k8s
