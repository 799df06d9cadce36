// RestClient against a real kube-apiserver + kube-controller-manager (1.20) on loopback:
// CRUD on a CRD with status and scale subresources, optimistic concurrency, patches, foreground
// deletion through the garbage collector, 410 on a too-old watch, RBAC denials, a dead server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::k8s {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

const Resource kWidgets{"k8srest.test.io", "v1", "widgets", true};
const Resource kConfigMaps{"", "v1", "configmaps", true};
const Resource kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
const Resource kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true};

// How often a wait looks again: most looks are requests to the API server (one even writes).
constexpr milliseconds kPoll{100};

std::unique_ptr<RestClient> clientFromKubeconfig(const std::filesystem::path& path) {
  auto config = loadKubeconfigFiles({path});
  if (!config) throw std::runtime_error(config.error().describe());
  return std::make_unique<RestClient>(*config);
}

class K8sClientRest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto& plane = testenv::sharedControlPlane();
    admin_ = clientFromKubeconfig(plane.kubeconfigPath()).release();
    installWidgetCrd();
  }
  static void TearDownTestSuite() {
    delete admin_;
    admin_ = nullptr;
  }

  // A fresh namespace per test, so tests never see each other's objects.
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "rest-" + std::string(info->name());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ns_ = name.substr(0, 60);
    auto created = admin_->create(
        resources::namespaces(), "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.has_value()) << created.error().describe();
  }

  static void installWidgetCrd() {
    Json schema = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
    Json crd = {
        {"apiVersion", "apiextensions.k8s.io/v1"},
        {"kind", "CustomResourceDefinition"},
        {"metadata", {{"name", "widgets.k8srest.test.io"}}},
        {"spec",
         {{"group", "k8srest.test.io"},
          {"scope", "Namespaced"},
          {"names",
           {{"plural", "widgets"},
            {"singular", "widget"},
            {"kind", "Widget"},
            {"listKind", "WidgetList"}}},
          {"versions", Json::array({{{"name", "v1"},
                                     {"served", true},
                                     {"storage", true},
                                     {"schema", {{"openAPIV3Schema", schema}}},
                                     {"subresources",
                                      {{"status", Json::object()},
                                       {"scale",
                                        {{"specReplicasPath", ".spec.replicas"},
                                         {"statusReplicasPath", ".status.replicas"},
                                         {"labelSelectorPath", ".status.selector"}}}}}}})}}}};
    auto created = admin_->create(resources::customResourceDefinitions(), "", crd);
    if (!created && !created.error().is(ErrorKind::AlreadyExists)) {
      throw std::runtime_error(created.error().describe());
    }
    bool established = test_kit::eventually(seconds(60), kPoll, [] {
      auto got = admin_->get(resources::customResourceDefinitions(), "", "widgets.k8srest.test.io");
      if (!got) return false;
      for (const auto& c : (*got)["status"].value("conditions", Json::array())) {
        if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
      }
      return false;
    });
    if (!established) throw std::runtime_error("CRD widgets.k8srest.test.io never Established");
    // Discovery of a new CRD lags Established by a moment; a list answers once it is served.
    if (!test_kit::eventually(seconds(30), kPoll,
                              [] { return admin_->list(kWidgets, "default").has_value(); })) {
      throw std::runtime_error("widgets are never served");
    }
  }

  static RestClient* admin_;
  std::string ns_;
};

RestClient* K8sClientRest::admin_ = nullptr;

Json widget(const std::string& name, int replicas) {
  return {{"apiVersion", "k8srest.test.io/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", name}}},
          {"spec", {{"replicas", replicas}}}};
}

TEST_F(K8sClientRest, CrudOnACustomResourceWithStatusAndScale) {
  auto created = admin_->create(kWidgets, ns_, widget("w", 2));
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  EXPECT_EQ((*created)["metadata"]["namespace"], ns_);

  auto again = admin_->create(kWidgets, ns_, widget("w", 2));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().kind, ErrorKind::AlreadyExists);
  EXPECT_EQ(again.error().http_status, 409);

  // Status through /status: the main resource ignores status changes, /status keeps them.
  Json with_status = *created;
  with_status["status"] = {{"replicas", 2}, {"selector", "app=w"}};
  auto status_written = admin_->update(kWidgets, ns_, with_status, "status");
  ASSERT_TRUE(status_written.has_value()) << status_written.error().describe();
  EXPECT_EQ((*status_written)["status"]["replicas"], 2);

  // Scale reads spec and status through the CRD's paths, and writes spec.replicas.
  auto scale = admin_->get(kWidgets, ns_, "w", "scale");
  ASSERT_TRUE(scale.has_value()) << scale.error().describe();
  EXPECT_EQ((*scale)["kind"], "Scale");
  EXPECT_EQ((*scale)["spec"]["replicas"], 2);
  EXPECT_EQ((*scale)["status"]["replicas"], 2);
  EXPECT_EQ((*scale)["status"]["selector"], "app=w");
  (*scale)["spec"]["replicas"] = 5;
  auto scaled = admin_->update(kWidgets, ns_, *scale, "scale");
  ASSERT_TRUE(scaled.has_value()) << scaled.error().describe();
  auto after_scale = admin_->get(kWidgets, ns_, "w");
  ASSERT_TRUE(after_scale.has_value());
  EXPECT_EQ((*after_scale)["spec"]["replicas"], 5);

  auto patched_scale =
      admin_->patch(kWidgets, ns_, "w", PatchType::Merge, {{"spec", {{"replicas", 3}}}}, "scale");
  ASSERT_TRUE(patched_scale.has_value()) << patched_scale.error().describe();
  EXPECT_EQ((*admin_->get(kWidgets, ns_, "w"))["spec"]["replicas"], 3);

  // Update of the main resource, then list with a label selector.
  Json labelled = *admin_->get(kWidgets, ns_, "w");
  labelled["metadata"]["labels"] = {{"tier", "gold"}};
  ASSERT_TRUE(admin_->update(kWidgets, ns_, labelled).has_value());
  ASSERT_TRUE(admin_->create(kWidgets, ns_, widget("plain", 1)).has_value());
  ListOptions gold;
  gold.label_selector = "tier=gold";
  auto listed = admin_->list(kWidgets, ns_, gold);
  ASSERT_TRUE(listed.has_value()) << listed.error().describe();
  ASSERT_EQ((*listed)["items"].size(), 1u);
  EXPECT_EQ((*listed)["items"][0]["metadata"]["name"], "w");

  auto removed = admin_->remove(kWidgets, ns_, "w");
  ASSERT_TRUE(removed.has_value()) << removed.error().describe();
  auto gone = admin_->get(kWidgets, ns_, "w");
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().kind, ErrorKind::NotFound);
  EXPECT_THAT(gone.error().message, HasSubstr("\"w\" not found"));
}

TEST_F(K8sClientRest, PaginationWithContinueOverRealData) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(admin_->create(kWidgets, ns_, widget("p" + std::to_string(i), 1)).has_value());
  }
  ListOptions page;
  page.limit = 3;
  auto first = admin_->list(kWidgets, ns_, page);
  ASSERT_TRUE(first.has_value()) << first.error().describe();
  EXPECT_EQ((*first)["items"].size(), 3u);
  EXPECT_FALSE((*first)["metadata"].value("continue", "").empty());
  auto all = listAll(*admin_, kWidgets, ns_, page);
  ASSERT_TRUE(all.has_value()) << all.error().describe();
  EXPECT_EQ((*all)["items"].size(), 7u);
}

TEST_F(K8sClientRest, StaleResourceVersionIsAConflict) {
  auto created = admin_->create(kWidgets, ns_, widget("c", 1));
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  Json first = *created;
  first["spec"]["replicas"] = 2;
  ASSERT_TRUE(admin_->update(kWidgets, ns_, first).has_value());
  Json stale = *created;  // still carries the old resourceVersion
  stale["spec"]["replicas"] = 9;
  auto conflict = admin_->update(kWidgets, ns_, stale);
  ASSERT_FALSE(conflict.has_value());
  EXPECT_EQ(conflict.error().kind, ErrorKind::Conflict);
  EXPECT_EQ(conflict.error().http_status, 409);
  EXPECT_THAT(conflict.error().message, HasSubstr("the object has been modified"));

  DeleteOptions precondition;
  precondition.precondition_resource_version = (*created)["metadata"]["resourceVersion"];
  auto refused = admin_->remove(kWidgets, ns_, "c", precondition);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, ErrorKind::Conflict);
}

Json statefulSet(const std::string& name) {
  Json labels = {{"app", name}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "StatefulSet"},
          {"metadata", {{"name", name}, {"labels", {{"keep", "yes"}, {"drop", "me"}}}}},
          {"spec",
           {{"replicas", 0},
            {"serviceName", name},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"containers",
                 Json::array({{{"name", "main"}, {"image", "example.invalid/none:1"}}})}}}}}}}};
}

TEST_F(K8sClientRest, MergePatchOfStatefulSetLabelsAndAnnotations) {
  ASSERT_TRUE(admin_->create(resources::statefulSets(), ns_, statefulSet("sts")).has_value());
  Json patch = {
      {"metadata",
       {{"labels", {{"shardscaler.io/retained", "true"}, {"drop", nullptr}}},
        {"annotations", {{"operator.prometheus.io/deletion-timestamp", "2026-11-25T10:00:00Z"}}}}}};
  auto patched = admin_->patch(resources::statefulSets(), ns_, "sts", PatchType::Merge, patch);
  ASSERT_TRUE(patched.has_value()) << patched.error().describe();
  Json labels = (*patched)["metadata"]["labels"];
  EXPECT_EQ(labels["keep"], "yes");
  EXPECT_EQ(labels["shardscaler.io/retained"], "true");
  EXPECT_FALSE(labels.contains("drop"));
  EXPECT_EQ((*patched)["metadata"]["annotations"]["operator.prometheus.io/deletion-timestamp"],
            "2026-11-25T10:00:00Z");

  auto json_patch =
      admin_->patch(resources::statefulSets(), ns_, "sts", PatchType::Json,
                    Json::array({{{"op", "remove"}, {"path", "/metadata/labels/keep"}}}));
  ASSERT_TRUE(json_patch.has_value()) << json_patch.error().describe();
  EXPECT_FALSE((*json_patch)["metadata"]["labels"].contains("keep"));

  auto strategic = admin_->patch(resources::statefulSets(), ns_, "sts", PatchType::StrategicMerge,
                                 {{"metadata", {{"labels", {{"strategic", "yes"}}}}}});
  ASSERT_TRUE(strategic.has_value()) << strategic.error().describe();
  EXPECT_EQ((*strategic)["metadata"]["labels"]["strategic"], "yes");
}

// The metadata-only path (PartialObjectMetadata through the Accept header) against the real
// 1.20 API server, for a built-in resource and a custom one: lists (paged), and a watch whose
// objects are metadata only and, with a FieldMask, only the fields asked for.
TEST_F(K8sClientRest, MetadataOnlyListsAndWatchesGetPartialObjectMetadata) {
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(admin_->create(resources::statefulSets(), ns_, statefulSet(name)).has_value());
  }
  ASSERT_TRUE(admin_->create(kWidgets, ns_, widget("w", 2)).has_value());

  ListOptions paged{.limit = 2, .metadata_only = true};
  auto list = listAll(*admin_, resources::statefulSets(), ns_, paged);
  ASSERT_TRUE(list.has_value()) << list.error().describe();
  EXPECT_EQ((*list)["kind"], "PartialObjectMetadataList");
  EXPECT_EQ((*list)["apiVersion"], "meta.k8s.io/v1");
  EXPECT_FALSE((*list)["metadata"].value("resourceVersion", "").empty());
  ASSERT_EQ((*list)["items"].size(), 3u);
  for (const Json& item : (*list)["items"]) {
    EXPECT_EQ(item["kind"], "PartialObjectMetadata") << item.dump();
    EXPECT_FALSE(item.contains("spec")) << item.dump();
    EXPECT_EQ(item["metadata"]["labels"]["keep"], "yes");
    EXPECT_FALSE(item["metadata"].value("uid", "").empty());
  }

  auto widgets = admin_->list(kWidgets, ns_, {.metadata_only = true});
  ASSERT_TRUE(widgets.has_value()) << widgets.error().describe();
  ASSERT_EQ((*widgets)["items"].size(), 1u);
  EXPECT_EQ((*widgets)["items"][0]["kind"], "PartialObjectMetadata");
  EXPECT_FALSE((*widgets)["items"][0].contains("spec"));

  auto fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  fields->keep({"metadata", "name"}).keep({"metadata", "resourceVersion"});
  fields->keep({"metadata", "labels", "keep"});
  auto names =
      admin_->list(resources::statefulSets(), ns_, {.metadata_only = true, .fields = fields});
  ASSERT_TRUE(names.has_value()) << names.error().describe();
  ASSERT_EQ((*names)["items"].size(), 3u);
  EXPECT_EQ((*names)["items"][0]["metadata"].size(), 3u) << (*names)["items"][0].dump();
  EXPECT_EQ((*names)["items"][0]["metadata"]["labels"], Json({{"keep", "yes"}}));

  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::vector<WatchEvent> events;
  WatchOptions opts;
  opts.resource_version = (*list)["metadata"]["resourceVersion"];
  opts.timeout_seconds = 60;
  opts.metadata_only = true;
  opts.fields = fields;
  // The controller-manager writes the status of a, b and c meanwhile: watch only d.
  opts.field_selector = "metadata.name=d";
  std::thread watcher([&] {
    auto result = admin_->watch(
        resources::statefulSets(), ns_, opts,
        [&](WatchEvent&& e) {
          std::lock_guard lock(mutex);
          if (e.type != WatchEventType::Bookmark) events.push_back(std::move(e));
          return true;
        },
        &stop);
    EXPECT_TRUE(result.has_value()) << result.error().describe();
  });
  ASSERT_TRUE(admin_->create(resources::statefulSets(), ns_, statefulSet("d")).has_value());
  ASSERT_TRUE(admin_
                  ->patch(resources::statefulSets(), ns_, "d", PatchType::Merge,
                          {{"metadata", {{"labels", {{"keep", "changed"}}}}}})
                  .has_value());
  const bool seen = test_kit::eventually(seconds(30), kPoll, [&] {
    std::lock_guard lock(mutex);
    return std::ranges::any_of(events, [](const WatchEvent& e) {
      return e.object["metadata"]["labels"].value("keep", "") == "changed";
    });
  });
  stop.store(true);
  watcher.join();
  ASSERT_TRUE(seen);
  // The controller-manager also writes d's status: those events carry the same three fields.
  EXPECT_EQ(events[0].type, WatchEventType::Added);
  EXPECT_EQ(events[0].object,
            Json({{"metadata",
                   {{"name", "d"},
                    {"resourceVersion", events[0].object["metadata"]["resourceVersion"]},
                    {"labels", {{"keep", "yes"}}}}}}));
  for (const auto& e : events) {
    EXPECT_EQ(e.object["metadata"].size(), 3u) << e.object.dump();
    EXPECT_FALSE(e.object.contains("spec")) << e.object.dump();
  }
}

TEST_F(K8sClientRest, ForegroundDeleteFinishesThroughTheGarbageCollector) {
  auto sts = admin_->create(resources::statefulSets(), ns_, statefulSet("owner"));
  ASSERT_TRUE(sts.has_value()) << sts.error().describe();
  Json dependent = {{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata",
                     {{"name", "dependent"},
                      {"ownerReferences", Json::array({{{"apiVersion", "apps/v1"},
                                                        {"kind", "StatefulSet"},
                                                        {"name", "owner"},
                                                        {"uid", (*sts)["metadata"]["uid"]},
                                                        {"blockOwnerDeletion", true}}})}}}};
  ASSERT_TRUE(admin_->create(kConfigMaps, ns_, dependent).has_value());

  DeleteOptions foreground;
  foreground.propagation_policy = "Foreground";
  foreground.precondition_uid = (*sts)["metadata"]["uid"];
  auto accepted = admin_->remove(resources::statefulSets(), ns_, "owner", foreground);
  ASSERT_TRUE(accepted.has_value()) << accepted.error().describe();
  // Foreground: the owner stays, marked, until the collector has removed its dependents.
  if (accepted->contains("metadata")) {
    EXPECT_TRUE((*accepted)["metadata"].contains("deletionTimestamp"));
  }
  EXPECT_TRUE(test_kit::eventually(seconds(90), kPoll, [&] {
    auto got = admin_->get(resources::statefulSets(), ns_, "owner");
    return !got && got.error().is(ErrorKind::NotFound);
  }));
  auto dependent_now = admin_->get(kConfigMaps, ns_, "dependent");
  ASSERT_FALSE(dependent_now.has_value());
  EXPECT_EQ(dependent_now.error().kind, ErrorKind::NotFound);
}

TEST_F(K8sClientRest, WatchStreamsAddedModifiedDeletedAndStops) {
  auto list = admin_->list(kConfigMaps, ns_);
  ASSERT_TRUE(list.has_value()) << list.error().describe();
  std::string from = (*list)["metadata"]["resourceVersion"];

  std::atomic<bool> stop{false};
  std::vector<WatchEvent> events;
  std::mutex mutex;
  WatchOptions opts;
  opts.resource_version = from;
  opts.timeout_seconds = 60;
  // Only this test's object: the controller-manager publishes kube-root-ca.crt into a new
  // namespace, sometimes after the list above.
  opts.field_selector = "metadata.name=watched";
  std::thread watcher([&] {
    auto result = admin_->watch(
        kConfigMaps, ns_, opts,
        [&](WatchEvent&& e) {
          std::lock_guard lock(mutex);
          events.push_back(std::move(e));
          return true;
        },
        &stop);
    EXPECT_TRUE(result.has_value()) << result.error().describe();
  });
  Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "watched"}}}};
  ASSERT_TRUE(admin_->create(kConfigMaps, ns_, cm).has_value());
  ASSERT_TRUE(admin_->patch(kConfigMaps, ns_, "watched", PatchType::Merge, {{"data", {{"k", "v"}}}})
                  .has_value());
  ASSERT_TRUE(admin_->remove(kConfigMaps, ns_, "watched").has_value());
  bool all_seen = test_kit::eventually(seconds(30), kPoll, [&] {
    std::lock_guard lock(mutex);
    int non_bookmark = 0;
    for (const auto& e : events) non_bookmark += e.type != WatchEventType::Bookmark;
    return non_bookmark >= 3;
  });
  auto stopped_at = std::chrono::steady_clock::now();
  stop.store(true);
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, milliseconds(2000));
  ASSERT_TRUE(all_seen);
  std::vector<WatchEventType> types;
  for (const auto& e : events) {
    if (e.type != WatchEventType::Bookmark) types.push_back(e.type);
  }
  EXPECT_EQ(types, (std::vector<WatchEventType>{WatchEventType::Added, WatchEventType::Modified,
                                                WatchEventType::Deleted}));
}

// Events bypass the API server's watch cache, so a watch from a resourceVersion that etcd has
// compacted away gets etcd's answer: 410 Expired, as an ERROR event. The shared control plane
// compacts every 5 minutes; this test starts its own that compacts every 2 seconds.
TEST(K8sClientRestCompacted, WatchFromACompactedResourceVersionIsGone) {
  testenv::ControlPlaneOptions options;
  options.start_controller_manager = false;
  options.extra_apiserver_flags = {"--etcd-compaction-interval=2s"};
  testenv::ControlPlane plane(options);
  auto client = clientFromKubeconfig(plane.kubeconfigPath());
  Json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", "before-compaction"}}},
                {"involvedObject", {{"kind", "Namespace"}, {"name", "default"}}},
                {"reason", "Test"},
                {"message", "written before a compaction"}};
  auto created = client->create(resources::events(), "default", event);
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  std::string old_version = (*created)["metadata"]["resourceVersion"];

  Error last;
  bool gone = test_kit::eventually(seconds(90), kPoll, [&] {
    // Each write moves etcd's revision on, so the next compaction passes old_version.
    Json bump = {
        {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"generateName", "bump-"}}}};
    (void)client->create(kConfigMaps, "default", bump);
    WatchOptions opts;
    opts.resource_version = old_version;
    opts.timeout_seconds = 1;
    auto result =
        client->watch(resources::events(), "default", opts, [](WatchEvent&&) { return true; });
    if (result) return false;
    last = result.error();
    return last.is(ErrorKind::Gone);
  });
  ASSERT_TRUE(gone) << "last error: " << last.describe();
  EXPECT_EQ(last.http_status, 410);
  EXPECT_EQ(last.reason, "Expired");
  EXPECT_THAT(last.message, HasSubstr("too old"));
}

TEST_F(K8sClientRest, RoleWithOnlyGetIsForbiddenElsewhereWithAClearError) {
  auto& plane = testenv::sharedControlPlane();
  Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "allowed"}}}};
  ASSERT_TRUE(admin_->create(kConfigMaps, ns_, cm).has_value());
  Json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "Role"},
               {"metadata", {{"name", "get-one"}}},
               {"rules", Json::array({{{"apiGroups", {""}},
                                       {"resources", {"configmaps"}},
                                       {"resourceNames", {"allowed"}},
                                       {"verbs", {"get"}}}})}};
  ASSERT_TRUE(admin_->create(kRoles, ns_, role).has_value());
  Json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", "get-one"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "get-one"}}},
      {"subjects",
       Json::array(
           {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", "user-1"}}})}};
  ASSERT_TRUE(admin_->create(kRoleBindings, ns_, binding).has_value());

  auto user = clientFromKubeconfig(plane.writeKubeconfig("user-1-rest", plane.userToken(1), ns_));
  EXPECT_EQ(user->config().default_namespace, ns_);
  // RBAC changes reach the authorizer's cache quickly but not synchronously.
  ASSERT_TRUE(test_kit::eventually(
      seconds(30), kPoll, [&] { return user->get(kConfigMaps, ns_, "allowed").has_value(); }));

  auto listed = user->list(kConfigMaps, ns_);
  ASSERT_FALSE(listed.has_value());
  EXPECT_EQ(listed.error().kind, ErrorKind::Forbidden);
  EXPECT_EQ(listed.error().http_status, 403);
  EXPECT_THAT(listed.error().describe(),
              HasSubstr("Forbidden (403): configmaps is forbidden: User \"user-1\" cannot list "
                        "resource \"configmaps\" in API group \"\" in the namespace \"" +
                        ns_ + "\""));

  auto secret = user->get(resources::secrets(), ns_, "anything");
  ASSERT_FALSE(secret.has_value());
  EXPECT_EQ(secret.error().kind, ErrorKind::Forbidden);
  EXPECT_THAT(secret.error().message, HasSubstr("User \"user-1\" cannot get resource \"secrets\""));

  auto other = user->get(kConfigMaps, ns_, "not-allowed");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().kind, ErrorKind::Forbidden);

  auto wrong_token = clientFromKubeconfig(plane.writeKubeconfig("bad-token", "not-a-token"));
  auto unauthorized = wrong_token->list(kConfigMaps, ns_);
  ASSERT_FALSE(unauthorized.has_value());
  EXPECT_EQ(unauthorized.error().kind, ErrorKind::Unauthorized);
}

TEST_F(K8sClientRest, ServerThatIsDownGivesOneClearError) {
  KubeConfig config = admin_->config();
  const testenv::RefusingPort refusing;  // a server that is down
  config.server = refusing.url("https");
  RestClient down(config);
  auto result = down.list(kConfigMaps, ns_);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Transport);
  EXPECT_THAT(result.error().message,
              HasSubstr("list configmaps/v1 (GET /api/v1/namespaces/" + ns_ +
                        "/configmaps): cannot reach the API server " + config.server));
}

TEST_F(K8sClientRest, WrongCaFailsTlsWithAClearError) {
  KubeConfig config = admin_->config();
  config.ca_file.clear();
  config.ca_data.clear();  // the system store does not know the test CA
  RestClient untrusted(config);
  auto result = untrusted.list(kConfigMaps, ns_);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Transport);
  EXPECT_THAT(result.error().message, HasSubstr("TLS with the API server"));
}

}  // namespace
}  // namespace shardscaler::k8s
