#include "fake_objects.h"

#include "shardscaler/k8s_client/api_status.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"

namespace shardscaler::k8s::testing {

std::string_view toString(Verb verb) {
  switch (verb) {
    case Verb::Get:
      return "get";
    case Verb::List:
      return "list";
    case Verb::Create:
      return "create";
    case Verb::Update:
      return "update";
    case Verb::Patch:
      return "patch";
    case Verb::Remove:
      return "delete";
    case Verb::Watch:
      return "watch";
  }
  return "?";
}

bool CallMatch::matches(const Call& call) const {
  if (verb && *verb != call.verb) return false;
  if (!resource.empty() && resource != call.resource.resource) return false;
  if (!name.empty() && name != call.name) return false;
  return !subresource || *subresource == call.subresource;
}

Error statusError(int http_status, std::string message, std::string reason,
                  std::optional<std::chrono::seconds> retry_after) {
  if (reason.empty()) {
    switch (http_status) {
      case 400:
        reason = "BadRequest";
        break;
      case 401:
        reason = "Unauthorized";
        break;
      case 403:
        reason = "Forbidden";
        break;
      case 404:
        reason = "NotFound";
        break;
      case 409:
        reason = "Conflict";
        break;
      case 410:
        reason = "Expired";
        break;
      case 422:
        reason = "Invalid";
        break;
      case 429:
        reason = "TooManyRequests";
        break;
      case 500:
        reason = "InternalError";
        break;
      case 503:
        reason = "ServiceUnavailable";
        break;
      case 504:
        reason = "Timeout";
        break;
      default:
        break;
    }
  }
  Json status{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", http_status}};
  if (retry_after) status["details"] = {{"retryAfterSeconds", retry_after->count()}};
  // The RestClient's own path from an answer to an Error, so the caller cannot tell the two apart.
  return errorFromResponse(http_status, status.dump(), retry_after, "fake request");
}

namespace detail {

std::string qualifiedName(const Resource& r, const std::string& name) {
  return r.resource + (r.group.empty() ? "" : "." + r.group) + " \"" + name + "\"";
}

Error notFound(const Resource& r, const std::string& name) {
  return statusError(404, qualifiedName(r, name) + " not found");
}

Error alreadyExists(const Resource& r, const std::string& name) {
  return statusError(409, qualifiedName(r, name) + " already exists", "AlreadyExists");
}

Error modified(const Resource& r, const std::string& name) {
  return statusError(409, "Operation cannot be fulfilled on " + qualifiedName(r, name) +
                              ": the object has been modified; please apply your changes to the "
                              "latest version and try again");
}

Error preconditionFailed(const Resource& r, const std::string& name, const std::string& what,
                         const std::string& wanted, const std::string& actual) {
  return statusError(409, "Operation cannot be fulfilled on " + qualifiedName(r, name) +
                              ": Precondition failed: " + what + " in precondition: " + wanted +
                              ", " + what + " in object meta: " + actual);
}

Error invalidField(const Json& object, const Resource& r, const std::string& name,
                   const std::string& field, const Json& value, const std::string& detail) {
  const std::string kind = object.value("kind", r.resource);
  return statusError(422, kind + (r.group.empty() ? "" : "." + r.group) + " \"" + name +
                              "\" is invalid: " + field + ": Invalid value: " + value.dump() +
                              ": " + detail);
}

Result<Selection> Selection::make(const std::string& ns, const std::string& label_selector,
                                  const std::string& field_selector) {
  Selection s;
  s.ns_ = ns;
  auto labels = LabelSelector::parse(label_selector);
  if (!labels)
    return std::unexpected(statusError(400, "unable to parse requirement: " + labels.error()));
  s.labels_ = std::move(*labels);
  std::string rest = field_selector;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string term = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const auto eq = term.find('=');
    if (eq == std::string::npos) {
      return std::unexpected(statusError(
          400, "field selector \"" + term + "\": the fake serves field=value and field!=value"));
    }
    const bool equal = eq == 0 || term[eq - 1] != '!';
    const std::string field = term.substr(0, equal ? eq : eq - 1);
    std::string value = term.substr(eq + 1);
    if (equal && value.starts_with('=')) value.erase(0, 1);
    constexpr std::string_view kMetadata = "metadata.";
    if (field != "metadata.name" && field != "metadata.namespace") {
      return std::unexpected(statusError(400, "field label not supported: " + field +
                                                  " (the fake serves metadata.name and "
                                                  "metadata.namespace)"));
    }
    s.fields_.push_back({field.substr(kMetadata.size()), std::move(value), equal});
  }
  return s;
}

bool Selection::matches(const Json& object) const {
  const Json& metadata = object["metadata"];
  if (!ns_.empty() && metadata.value("namespace", "") != ns_) return false;
  for (const FieldTerm& term : fields_) {
    if ((metadata.value(term.key, "") == term.value) != term.equal) return false;
  }
  return labels_.matches(labelsOf(metadata.value("labels", Json::object())));
}

Json served(const Json& object, bool metadata_only, const FieldMask* fields) {
  Json out = object;
  if (metadata_only) {
    out = Json{{"kind", "PartialObjectMetadata"},
               {"apiVersion", "meta.k8s.io/v1"},
               {"metadata", object.value("metadata", Json::object())}};
  }
  if (fields != nullptr) fields->apply(out);
  return out;
}

}  // namespace detail
}  // namespace shardscaler::k8s::testing
