#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_meta/metadata_patch.h"

namespace shardscaler::k8s::meta {
namespace {

using Json = nlohmann::json;

constexpr const char* kFinalizer = "shardscaler.io/release-target";
constexpr const char* kAnnotation = "shardscaler.io/bound-target";

Json object(Json metadata) {
  metadata["name"] = "main";
  metadata["resourceVersion"] = "7";
  return Json{{"kind", "ShardSet"}, {"metadata", std::move(metadata)}};
}

// What the API server stores after the patch, applied to the object as last seen.
Json applied(const Json& seen, const MetadataPatch& patch) {
  return seen.patch(patch.operations());
}

TEST(MetadataPatch, FirstTestsTheResourceVersionSoAChangedObjectTakesNoneOfIt) {
  const Json seen = object({{"finalizers", {"other"}}});
  MetadataPatch patch(seen);
  patch.addFinalizer(kFinalizer);
  EXPECT_EQ(patch.operations()[0],
            (Json{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "7"}}));
  Json changed = seen;
  changed["metadata"]["resourceVersion"] = "8";
  EXPECT_THROW(changed.patch(patch.operations()), Json::other_error);
}

TEST(MetadataPatch, AddsAFinalizerToAListOrCreatesTheList) {
  for (const Json& metadata :
       {Json::object(), Json{{"finalizers", Json::array()}}, Json{{"finalizers", {"other"}}}}) {
    const Json seen = object(metadata);
    MetadataPatch patch(seen);
    patch.addFinalizer(kFinalizer);
    Json want = metadata.value("finalizers", Json::array());
    want.push_back(kFinalizer);
    EXPECT_EQ(applied(seen, patch)["metadata"]["finalizers"], want) << metadata;
  }
}

TEST(MetadataPatch, AFinalizerAlreadyThereLeavesThePatchEmpty) {
  const Json seen = object({{"finalizers", {"other", kFinalizer}}});
  MetadataPatch patch(seen);
  patch.addFinalizer(kFinalizer);
  EXPECT_TRUE(patch.empty());
  EXPECT_TRUE(hasFinalizer(seen, kFinalizer));
  EXPECT_FALSE(hasFinalizer(seen, "absent"));
  EXPECT_FALSE(hasFinalizer(object({{"finalizers", "not a list"}}), kFinalizer));
}

TEST(MetadataPatch, RemovesOnlyThatFinalizer) {
  const Json seen = object({{"finalizers", {"first", kFinalizer, "last"}}});
  MetadataPatch patch(seen);
  patch.removeFinalizer(kFinalizer);
  EXPECT_EQ(applied(seen, patch)["metadata"]["finalizers"], (Json{"first", "last"}));

  MetadataPatch none(seen);
  none.removeFinalizer("absent");
  EXPECT_TRUE(none.empty());
}

TEST(MetadataPatch, SetsAnAnnotationWhoseKeyHoldsASlash) {
  for (const Json& metadata :
       {Json::object(), Json{{"annotations", {{"kept", "yes"}, {kAnnotation, "old"}}}}}) {
    const Json seen = object(metadata);
    MetadataPatch patch(seen);
    patch.addFinalizer(kFinalizer).setAnnotation(kAnnotation, "Prometheus/main");
    const Json after = applied(seen, patch);
    EXPECT_EQ(after["metadata"]["annotations"][kAnnotation], "Prometheus/main") << metadata;
    EXPECT_EQ(after["metadata"]["annotations"].value("kept", "yes"), "yes");
    EXPECT_EQ(after["metadata"]["finalizers"], (Json{kFinalizer}));
  }
}

TEST(MetadataPatch, TwoAnnotationsOnAnObjectWithoutAnyKeepBoth) {
  const Json seen = object(Json::object());
  MetadataPatch patch(seen);
  patch.setAnnotation("a", "1").setAnnotation("b/c", "2");
  EXPECT_EQ(applied(seen, patch)["metadata"]["annotations"], (Json{{"a", "1"}, {"b/c", "2"}}));
}

TEST(AnnotationMergePatch, SetsOrRemovesOneAnnotation) {
  Json seen = object({{"annotations", {{"kept", "yes"}, {kAnnotation, "old"}}}});
  Json set = seen;
  set.merge_patch(annotationMergePatch(kAnnotation, "Prometheus/main"));
  EXPECT_EQ(set["metadata"]["annotations"],
            (Json{{"kept", "yes"}, {kAnnotation, "Prometheus/main"}}));
  seen.merge_patch(annotationMergePatch(kAnnotation, std::nullopt));
  EXPECT_EQ(seen["metadata"]["annotations"], (Json{{"kept", "yes"}}));
}

}  // namespace
}  // namespace shardscaler::k8s::meta
