#include "shardscaler/k8s_meta/metadata_patch.h"

#include <algorithm>

#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::k8s::meta {

using Json = nlohmann::json;

namespace {

const Json& finalizersOf(const Json& object) {
  static const Json none = Json::array();
  const Json& finalizers = field(object, "metadata", "finalizers");
  return finalizers.is_array() ? finalizers : none;
}

Json operation(std::string_view op, std::string path, Json value) {
  return Json{{"op", op}, {"path", std::move(path)}, {"value", std::move(value)}};
}

}  // namespace

bool hasFinalizer(const Json& object, std::string_view finalizer) {
  const Json& finalizers = finalizersOf(object);
  return std::ranges::find(finalizers, Json(finalizer)) != finalizers.end();
}

MetadataPatch::MetadataPatch(const Json& object)
    : object_(object),
      operations_(Json::array({operation("test", "/metadata/resourceVersion",
                                         field(object, "metadata", "resourceVersion"))})) {}

MetadataPatch& MetadataPatch::addFinalizer(std::string_view finalizer) {
  if (hasFinalizer(object_, finalizer)) return *this;
  if (finalizersOf(object_).empty() && !finalizers_added_) {
    operations_.push_back(operation("add", "/metadata/finalizers", Json::array({finalizer})));
    finalizers_added_ = true;
  } else {
    operations_.push_back(operation("add", "/metadata/finalizers/-", finalizer));
  }
  return *this;
}

MetadataPatch& MetadataPatch::removeFinalizer(std::string_view finalizer) {
  const Json& finalizers = finalizersOf(object_);
  auto at = std::ranges::find(finalizers, Json(finalizer));
  if (at == finalizers.end()) return *this;
  operations_.push_back(
      Json{{"op", "remove"},
           {"path", "/metadata/finalizers/" + std::to_string(at - finalizers.begin())}});
  return *this;
}

MetadataPatch& MetadataPatch::setAnnotation(std::string_view key, std::string_view value) {
  if (field(object_, "metadata", "annotations").is_object() || annotations_added_) {
    // json_pointer escapes a '/' in the key as a JSON Pointer token (RFC 6901).
    operations_.push_back(operation(
        "add", (Json::json_pointer("/metadata/annotations") / std::string(key)).to_string(),
        value));
  } else {
    operations_.push_back(
        operation("add", "/metadata/annotations", Json{{std::string(key), value}}));
    annotations_added_ = true;
  }
  return *this;
}

Json annotationMergePatch(std::string_view key, std::optional<std::string_view> value) {
  return Json{{"metadata", {{"annotations", {{std::string(key), value ? Json(*value) : Json()}}}}}};
}

}  // namespace shardscaler::k8s::meta
