#include "shardscaler/planner/stateful_set.h"

#include "shardscaler/api/field_reader.h"

namespace shardscaler::planner {

const std::string* ObservedStatefulSet::label(std::string_view key) const {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

const std::string* ObservedStatefulSet::annotation(std::string_view key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &it->second;
}

std::expected<ObservedStatefulSet, api::FieldError> parseStatefulSet(const nlohmann::json& object) {
  using api::member;
  if (!object.is_object()) {
    return std::unexpected(api::FieldError{"", "a StatefulSet must be an object"});
  }
  std::vector<api::FieldError> errors;
  api::FieldReader r(errors);
  ObservedStatefulSet s;
  if (const auto* metadata = r.object(object, "metadata", "metadata")) {
    s.name = r.string(*metadata, "name", "metadata.name").value_or("");
    s.uid = r.string(*metadata, "uid", "metadata.uid").value_or("");
    s.resource_version =
        r.string(*metadata, "resourceVersion", "metadata.resourceVersion").value_or("");
    s.being_deleted = member(*metadata, "deletionTimestamp") != nullptr;
    s.labels = r.stringMap(*metadata, "labels", "metadata.labels");
    s.annotations = r.stringMap(*metadata, "annotations", "metadata.annotations");
    if (const auto* owners = r.array(*metadata, "ownerReferences", "metadata.ownerReferences")) {
      for (const auto& o : *owners) {
        OwnerReference ref;
        ref.api_version =
            r.string(o, "apiVersion", "metadata.ownerReferences.apiVersion").value_or("");
        ref.kind = r.string(o, "kind", "metadata.ownerReferences.kind").value_or("");
        ref.name = r.string(o, "name", "metadata.ownerReferences.name").value_or("");
        ref.uid = r.string(o, "uid", "metadata.ownerReferences.uid").value_or("");
        ref.controller =
            r.boolean(o, "controller", "metadata.ownerReferences.controller").value_or(false);
        ref.block_owner_deletion =
            r.boolean(o, "blockOwnerDeletion", "metadata.ownerReferences.blockOwnerDeletion")
                .value_or(false);
        s.owner_references.push_back(std::move(ref));
      }
    }
  }
  // Every field here decides whose StatefulSet this is; a half-read one must not be acted on.
  if (!errors.empty()) return std::unexpected(errors.front());
  if (s.name.empty()) return std::unexpected(api::FieldError{"metadata.name", "required"});
  if (s.uid.empty()) return std::unexpected(api::FieldError{"metadata.uid", "required"});
  return s;
}

}  // namespace shardscaler::planner
