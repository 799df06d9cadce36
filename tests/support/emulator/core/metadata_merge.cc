#include "metadata_merge.h"

#include <string>

#include "shard_naming.h"
#include "target_kind.h"

namespace shardscaler::emulator {

namespace {

bool hasPrefix(const std::string& key, const char* prefix) { return key.rfind(prefix, 0) == 0; }

Json mergedMap(const Json& existing_meta, const Json& desired_meta, const char* field) {
  Json out = Json::object();
  if (auto old = existing_meta.find(field); old != existing_meta.end() && old->is_object()) {
    for (const auto& [key, value] : old->items()) {
      if (!hasPrefix(key, kOperatorPrefix)) out[key] = value;
    }
  }
  if (auto cur = desired_meta.find(field); cur != desired_meta.end() && cur->is_object()) {
    for (const auto& [key, value] : cur->items()) out[key] = value;
  }
  return out;
}

}  // namespace

void mergeMetadata(Json& desired, const Json& existing) {
  const Json existing_meta = objectField(existing, "metadata");
  Json& meta = desired["metadata"];
  if (auto rv = existing_meta.find("resourceVersion"); rv != existing_meta.end()) {
    meta["resourceVersion"] = *rv;
  }
  Json labels = mergedMap(existing_meta, meta, "labels");
  Json annotations = mergedMap(existing_meta, meta, "annotations");
  meta["labels"] = std::move(labels);
  meta["annotations"] = std::move(annotations);
}

void copyKubectlTemplateAnnotations(Json& desired, const Json& existing) {
  const Json* existing_annotations = nullptr;
  if (auto spec = existing.find("spec"); spec != existing.end() && spec->is_object()) {
    if (auto tmpl = spec->find("template"); tmpl != spec->end() && tmpl->is_object()) {
      if (auto meta = tmpl->find("metadata"); meta != tmpl->end() && meta->is_object()) {
        if (auto a = meta->find("annotations"); a != meta->end() && a->is_object()) {
          existing_annotations = &*a;
        }
      }
    }
  }
  if (!existing_annotations) return;
  Json& annotations = desired["spec"]["template"]["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  for (const auto& [key, value] : existing_annotations->items()) {
    if (hasPrefix(key, kKubectlPrefix)) annotations[key] = value;
  }
}

Json mergeOwnerReferences(const Json& existing_refs, const Json& desired_refs) {
  Json out = existing_refs.is_array() ? existing_refs : Json::array();
  if (!desired_refs.is_array()) return out;
  for (const auto& ref : desired_refs) {
    bool present = false;
    for (const auto& have : out) present = present || have == ref;  // whole-struct equality
    if (!present) out.push_back(ref);
  }
  return out;
}

}  // namespace shardscaler::emulator
