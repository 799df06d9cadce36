// What the FakeKubeClient's API-server imitation needs beyond its store: the API server's error
// answers, selectors, and what a list or watch hands out. Private to k8s_testing.
#pragma once

#include <string>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/label_selector.h"

namespace shardscaler::k8s::testing::detail {

// `statefulsets.apps "name"`, as the API server names an object in its messages.
std::string qualifiedName(const Resource& r, const std::string& name);

Error notFound(const Resource& r, const std::string& name);
Error alreadyExists(const Resource& r, const std::string& name);
// 409: the object has been modified (a stale resourceVersion).
Error modified(const Resource& r, const std::string& name);
// 409: a DeleteOptions precondition (`what` is "UID" or "ResourceVersion").
Error preconditionFailed(const Resource& r, const std::string& name, const std::string& what,
                         const std::string& wanted, const std::string& actual);
// 422 on one field, as the API server's validation reports it.
Error invalidField(const Json& object, const Resource& r, const std::string& name,
                   const std::string& field, const Json& value, const std::string& detail);

// A list's or watch's selection: namespace, labels, and the field selectors metadata.name and
// metadata.namespace with =, == or != (the only ones the fake understands; others are refused
// with 400).
class Selection {
 public:
  static Result<Selection> make(const std::string& ns, const std::string& label_selector,
                                const std::string& field_selector);
  bool matches(const Json& object) const;

 private:
  struct FieldTerm {
    std::string key;  // in metadata: "name" or "namespace"
    std::string value;
    bool equal;  // = and ==; false for !=
  };
  std::string ns_;
  LabelSelector labels_;
  std::vector<FieldTerm> fields_;
};

// An object as RestClient would hand it out: PartialObjectMetadata when asked for metadata only,
// then only the fields asked for.
Json served(const Json& object, bool metadata_only, const FieldMask* fields);

}  // namespace shardscaler::k8s::testing::detail
