// Patches of an object's metadata, as controller-runtime's controllerutil.AddFinalizer /
// RemoveFinalizer and metav1.SetMetaDataAnnotation change a typed object before an update. Pure:
// each reads the object as last seen and returns the patch document; nothing here writes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shardscaler::k8s::meta {

// metadata.finalizers holds `finalizer`.
bool hasFinalizer(const nlohmann::json& object, std::string_view finalizer);

// A JSON Patch (RFC 6902) of an object as last seen. Its first operation tests
// metadata.resourceVersion, so the API server applies none of it once anything else changed the
// object (a concurrent change of the finalizer list is then not overwritten).
class MetadataPatch {
 public:
  explicit MetadataPatch(const nlohmann::json& object);

  // Adds `finalizer` to metadata.finalizers, unless the object carries it already.
  MetadataPatch& addFinalizer(std::string_view finalizer);
  // Removes `finalizer` from metadata.finalizers, if the object carries it.
  MetadataPatch& removeFinalizer(std::string_view finalizer);
  // Sets metadata.annotations[key] to `value`, creating the map when the object has none.
  MetadataPatch& setAnnotation(std::string_view key, std::string_view value);

  // Nothing to change: only the resourceVersion test.
  bool empty() const { return operations_.size() == 1; }
  const nlohmann::json& operations() const { return operations_; }

 private:
  const nlohmann::json& object_;
  nlohmann::json operations_;
  bool annotations_added_ = false;
  bool finalizers_added_ = false;
};

// The JSON merge patch (RFC 7386) that sets metadata.annotations[key] to `value`, or removes the
// annotation when `value` is nullopt.
nlohmann::json annotationMergePatch(std::string_view key, std::optional<std::string_view> value);

}  // namespace shardscaler::k8s::meta
