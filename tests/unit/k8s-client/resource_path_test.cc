#include <gtest/gtest.h>

#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::k8s {
namespace {

TEST(ResourcePath, CoreAndNamedGroups) {
  EXPECT_EQ(resources::pods().groupVersionPath(), "/api/v1");
  EXPECT_EQ(resources::statefulSets().groupVersionPath(), "/apis/apps/v1");
  EXPECT_EQ(resources::pods().collectionPath("ns1"), "/api/v1/namespaces/ns1/pods");
  EXPECT_EQ(resources::pods().collectionPath(""), "/api/v1/pods");
  EXPECT_EQ(resources::statefulSets().objectPath("mon", "prometheus-main"),
            "/apis/apps/v1/namespaces/mon/statefulsets/prometheus-main");
}

TEST(ResourcePath, ClusterScopedIgnoresNamespace) {
  EXPECT_EQ(resources::namespaces().objectPath("ignored", "kube-system"),
            "/api/v1/namespaces/kube-system");
  EXPECT_EQ(resources::customResourceDefinitions().collectionPath("x"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
}

TEST(ResourcePath, SubresourcesAndCustomResources) {
  Resource shardsets{"shardscaler.io", "v1alpha1", "shardsets", true};
  EXPECT_EQ(shardsets.objectPath("mon", "main", "scale"),
            "/apis/shardscaler.io/v1alpha1/namespaces/mon/shardsets/main/scale");
  EXPECT_EQ(shardsets.objectPath("mon", "main", "status"),
            "/apis/shardscaler.io/v1alpha1/namespaces/mon/shardsets/main/status");
  EXPECT_EQ(shardsets.describe(), "shardsets.shardscaler.io/v1alpha1");
  EXPECT_EQ(resources::pods().describe(), "pods/v1");
}

TEST(ResourcePath, NamesAreEscaped) {
  EXPECT_EQ(resources::pods().objectPath("a b", "x/y"), "/api/v1/namespaces/a%20b/pods/x%2Fy");
}

TEST(ResourcePath, WellKnownResources) {
  EXPECT_EQ(resources::leases().groupVersionPath(), "/apis/coordination.k8s.io/v1");
  EXPECT_EQ(resources::horizontalPodAutoscalers().groupVersionPath(), "/apis/autoscaling/v1");
  EXPECT_FALSE(resources::namespaces().namespaced);
  EXPECT_TRUE(resources::events().namespaced);
  EXPECT_EQ(resources::secrets().resource, "secrets");
  EXPECT_EQ(resources::serviceAccounts().resource, "serviceaccounts");
}

}  // namespace
}  // namespace shardscaler::k8s
