// The admission.k8s.io/v1 AdmissionReview that the API server posts to the shard guard, and the
// answer it expects. Decoding must never throw or crash: bad input is an error that names it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "shardscaler/base/expected.h"

namespace shardscaler::guard {

enum class Operation { Create, Update, Delete, Connect };
std::string_view toString(Operation operation);  // "CREATE", "UPDATE", ...

struct UserInfo {
  std::string username;
  std::vector<std::string> groups;
};

// The request fields the guard reads. object and old_object are JSON null when absent (DELETE
// has only old_object, CREATE only object).
struct AdmissionRequest {
  std::string uid;
  std::string group;  // request.resource: "apps", "v1", "statefulsets"
  std::string version;
  std::string resource;
  std::string sub_resource;
  std::string ns;
  std::string name;
  Operation operation = Operation::Create;
  UserInfo user;
  // request.options.fieldManager of a CREATE, UPDATE or PATCH ("" when the client sent none; a
  // DELETE's options carry no field manager).
  std::string field_manager;
  bool dry_run = false;
  nlohmann::json object;
  nlohmann::json old_object;
};

// Larger reviews are refused before parsing; a StatefulSet with its old copy is far below this.
inline constexpr std::size_t kMaxReviewBytes = std::size_t{3} * 1024 * 1024;

// The body of the webhook's POST. The error is one line that says what is wrong, e.g.
// `AdmissionReview: request.uid: missing` or `AdmissionReview: apiVersion
// "admission.k8s.io/v1beta1" is not served (admissionReviewVersions must be [v1])`.
Expected<AdmissionRequest> decodeAdmissionReview(std::string_view body);

struct AdmissionAnswer {
  bool allowed = true;
  std::string message;  // shown to the client when denied
};

// The response document: allowed, or allowed=false with status {code 403, reason Forbidden,
// message}. uid is echoed from the request, as the API server requires.
std::string encodeAdmissionResponse(std::string_view uid, const AdmissionAnswer& answer);

}  // namespace shardscaler::guard
