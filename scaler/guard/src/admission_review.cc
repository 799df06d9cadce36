#include "shardscaler/guard/admission_review.h"

#include <array>
#include <optional>

#include "shardscaler/base/expected.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_client/json_strings.h"
#include "shardscaler/k8s_client/validation.h"

namespace shardscaler::guard {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kApiVersion = "admission.k8s.io/v1";
// Kubernetes objects nest a dozen levels deep; far deeper input is an attack, not an object, and
// would only cost stack and time further in.
constexpr int kMaxNesting = 128;

std::unexpected<std::string> bad(std::string_view what) {
  return std::unexpected("AdmissionReview: " + std::string(what));
}

// A StatefulSet and its old copy hold a few thousand JSON values; each value parsed costs some
// hundred bytes whatever its text, so this bounds what one review can cost in memory (a body of
// "[],[],..." would otherwise cost twenty times its size).
constexpr std::size_t kMaxValues = 100000;

struct JsonShape {
  int deepest = 0;         // nesting of arrays and objects, brackets inside strings not counted
  std::size_t values = 0;  // about how many values: containers and separators
};

JsonShape jsonShape(std::string_view text) {
  JsonShape shape;
  int depth = 0;
  k8s::JsonStringTracker strings;
  for (char c : text) {
    if (strings.consume(c)) continue;
    if (c == '[' || c == '{') {
      shape.deepest = std::max(shape.deepest, ++depth);
      ++shape.values;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      ++shape.values;
    }
  }
  return shape;
}

// A value of the request repeated in an error: short and printable.
std::string echoed(std::string_view value) { return "\"" + untrustedText(value) + "\""; }

// A field that must be a string when present; nullopt when absent or null.
Expected<std::optional<std::string>> optionalString(const Json& parent, std::string_view key,
                                                    std::string_view path) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return std::optional<std::string>{};
  if (!it->is_string()) {
    return bad(std::string(path) + ": expected a string, got " + std::string(it->type_name()));
  }
  return std::optional<std::string>{it->get<std::string>()};
}

Expected<std::string> requiredString(const Json& parent, std::string_view key,
                                     std::string_view path) {
  auto value = optionalString(parent, key, path);
  if (!value) return std::unexpected(value.error());
  if (!value->has_value() || (*value)->empty()) return bad(std::string(path) + ": missing");
  return std::move(**value);
}

Expected<const Json*> requiredObject(const Json& parent, std::string_view key,
                                     std::string_view path) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return bad(std::string(path) + ": missing");
  if (!it->is_object()) {
    return bad(std::string(path) + ": expected an object, got " + std::string(it->type_name()));
  }
  return &*it;
}

// object / oldObject: an object, or absent/null.
Expected<Json> optionalObject(const Json& parent, std::string_view key, std::string_view path) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return Json(nullptr);
  if (!it->is_object()) {
    return bad(std::string(path) + ": expected an object, got " + std::string(it->type_name()));
  }
  return *it;
}

std::optional<Operation> parseOperation(std::string_view text) {
  static constexpr std::array<Operation, 4> kAll = {Operation::Create, Operation::Update,
                                                    Operation::Delete, Operation::Connect};
  for (Operation op : kAll) {
    if (toString(op) == text) return op;
  }
  return std::nullopt;
}

Expected<UserInfo> parseUserInfo(const Json& request) {
  UserInfo user;
  const auto it = request.find("userInfo");
  if (it == request.end() || it->is_null()) return user;  // anonymous as far as we can tell
  if (!it->is_object()) return bad("request.userInfo: expected an object");
  auto username = optionalString(*it, "username", "request.userInfo.username");
  if (!username) return std::unexpected(username.error());
  user.username = username->value_or("");
  const auto groups = it->find("groups");
  if (groups != it->end() && !groups->is_null()) {
    if (!groups->is_array()) return bad("request.userInfo.groups: expected an array");
    for (const Json& g : *groups) {
      if (!g.is_string()) return bad("request.userInfo.groups: entries must be strings");
      user.groups.push_back(g.get<std::string>());
    }
  }
  return user;
}

// What the request is about: uid, resource, subresource, namespace, name and operation.
Expected<void> parseSubject(const Json& r, AdmissionRequest& out) {
  auto uid = requiredString(r, "uid", "request.uid");
  if (!uid) return std::unexpected(uid.error());
  out.uid = std::move(*uid);

  auto resource = requiredObject(r, "resource", "request.resource");
  if (!resource) return std::unexpected(resource.error());
  auto group = optionalString(**resource, "group", "request.resource.group");
  if (!group) return std::unexpected(group.error());
  out.group = group->value_or("");
  auto version = requiredString(**resource, "version", "request.resource.version");
  if (!version) return std::unexpected(version.error());
  out.version = std::move(*version);
  auto plural = requiredString(**resource, "resource", "request.resource.resource");
  if (!plural) return std::unexpected(plural.error());
  out.resource = std::move(*plural);

  auto sub_resource = optionalString(r, "subResource", "request.subResource");
  if (!sub_resource) return std::unexpected(sub_resource.error());
  out.sub_resource = sub_resource->value_or("");
  auto ns = optionalString(r, "namespace", "request.namespace");
  if (!ns) return std::unexpected(ns.error());
  out.ns = ns->value_or("");
  auto name = optionalString(r, "name", "request.name");
  if (!name) return std::unexpected(name.error());
  out.name = name->value_or("");

  auto operation_text = requiredString(r, "operation", "request.operation");
  if (!operation_text) return std::unexpected(operation_text.error());
  const auto operation = parseOperation(*operation_text);
  if (!operation) {
    return bad("request.operation: " + echoed(*operation_text) +
               " is not CREATE, UPDATE, DELETE or CONNECT");
  }
  out.operation = *operation;

  return {};
}

// A map of metadata (labels, annotations): absent, null, or an object of strings.
Expected<void> checkStringMap(const Json& metadata, std::string_view key, const std::string& path,
                              bool labels) {
  const auto it = metadata.find(key);
  if (it == metadata.end() || it->is_null()) return {};
  if (!it->is_object()) return bad(path + ": expected an object, got " + it->type_name());
  for (const auto& [name, value] : it->items()) {
    if (!value.is_string()) return bad(path + ": values must be strings");
    if (labels &&
        (!k8s::isQualifiedName(name) || !k8s::isValidLabelValue(value.get<std::string>()))) {
      return bad(path + ": holds a key or value that is not a valid label");
    }
  }
  return {};
}

// object / oldObject of a StatefulSet review: the metadata the guard reads is what the API server
// would have sent, or the review is not one it sent.
Expected<void> checkObjectMetadata(const Json& object, const std::string& path, bool statefulset) {
  if (object.is_null()) return {};
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || metadata->is_null()) {
    if (statefulset) return bad(path + ".metadata: missing");
    return {};
  }
  if (!metadata->is_object()) {
    return bad(path + ".metadata: expected an object, got " + metadata->type_name());
  }
  for (const char* key : {"name", "namespace"}) {
    auto value = optionalString(*metadata, key, path + ".metadata." + key);
    if (!value) return std::unexpected(value.error());
    if (!statefulset || !value->has_value() || (*value)->empty()) continue;
    const bool valid = std::string_view(key) == "name" ? k8s::isDns1123Subdomain(**value)
                                                       : k8s::isDns1123Label(**value);
    if (!valid) return bad(path + ".metadata." + key + ": not a valid " + key);
  }
  if (auto ok = checkStringMap(*metadata, "labels", path + ".metadata.labels", statefulset); !ok) {
    return ok;
  }
  return checkStringMap(*metadata, "annotations", path + ".metadata.annotations", false);
}

Expected<void> checkNames(const AdmissionRequest& r) {
  const bool statefulset = r.group == "apps" && r.resource == "statefulsets";
  if (statefulset && !r.ns.empty() && !k8s::isDns1123Label(r.ns)) {
    return bad("request.namespace: not a valid namespace");
  }
  if (statefulset && !r.name.empty() && !k8s::isDns1123Subdomain(r.name)) {
    return bad("request.name: not a valid name");
  }
  if (auto ok = checkObjectMetadata(r.object, "request.object", statefulset); !ok) return ok;
  return checkObjectMetadata(r.old_object, "request.oldObject", statefulset);
}

}  // namespace

std::string_view toString(Operation operation) {
  switch (operation) {
    case Operation::Create:
      return "CREATE";
    case Operation::Update:
      return "UPDATE";
    case Operation::Delete:
      return "DELETE";
    case Operation::Connect:
      return "CONNECT";
  }
  return "UNKNOWN";
}

Expected<AdmissionRequest> decodeAdmissionReview(std::string_view body) {
  if (body.empty()) return bad("empty body (expected a JSON AdmissionReview)");
  if (body.size() > kMaxReviewBytes) {
    return bad("body of " + std::to_string(body.size()) + " bytes exceeds the limit of " +
               std::to_string(kMaxReviewBytes));
  }
  const JsonShape shape = jsonShape(body);
  if (shape.deepest > kMaxNesting) {
    return bad("JSON nested deeper than " + std::to_string(kMaxNesting) + " levels");
  }
  if (shape.values > kMaxValues) {
    return bad("more than " + std::to_string(kMaxValues) + " JSON values");
  }
  const Json review = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) return bad("body is not valid JSON");
  if (!review.is_object()) return bad("expected a JSON object");

  auto api_version = optionalString(review, "apiVersion", "apiVersion");
  if (!api_version) return std::unexpected(api_version.error());
  if (!api_version->has_value()) return bad("apiVersion: missing");
  if (**api_version != kApiVersion) {
    return bad("apiVersion " + echoed(**api_version) +
               " is not served (the webhook's admissionReviewVersions must be [v1])");
  }
  auto kind = optionalString(review, "kind", "kind");
  if (!kind) return std::unexpected(kind.error());
  if (kind->value_or("") != "AdmissionReview") {
    return bad("kind " + echoed(kind->value_or("")) + " is not AdmissionReview");
  }
  auto request = requiredObject(review, "request", "request");
  if (!request) return std::unexpected(request.error());
  const Json& r = **request;

  AdmissionRequest out;
  if (auto subject = parseSubject(r, out); !subject) return std::unexpected(subject.error());

  auto user = parseUserInfo(r);
  if (!user) return std::unexpected(user.error());
  out.user = std::move(*user);

  const auto dry_run = r.find("dryRun");
  if (dry_run != r.end() && !dry_run->is_null()) {
    if (!dry_run->is_boolean()) return bad("request.dryRun: expected a boolean");
    out.dry_run = dry_run->get<bool>();
  }

  auto options = optionalObject(r, "options", "request.options");
  if (!options) return std::unexpected(options.error());
  if (options->is_object()) {
    auto field_manager = optionalString(*options, "fieldManager", "request.options.fieldManager");
    if (!field_manager) return std::unexpected(field_manager.error());
    out.field_manager = field_manager->value_or("");
  }

  auto object = optionalObject(r, "object", "request.object");
  if (!object) return std::unexpected(object.error());
  out.object = std::move(*object);
  auto old_object = optionalObject(r, "oldObject", "request.oldObject");
  if (!old_object) return std::unexpected(old_object.error());
  out.old_object = std::move(*old_object);
  if (auto names = checkNames(out); !names) return std::unexpected(names.error());
  return out;
}

std::string encodeAdmissionResponse(std::string_view uid, const AdmissionAnswer& answer) {
  Json response = {{"uid", uid}, {"allowed", answer.allowed}};
  if (!answer.allowed) {
    response["status"] = {{"code", 403}, {"reason", "Forbidden"}, {"message", answer.message}};
  }
  const Json review = {
      {"apiVersion", kApiVersion}, {"kind", "AdmissionReview"}, {"response", response}};
  // Messages may hold any bytes from object names; replace what is not UTF-8 rather than throw.
  return review.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace shardscaler::guard
