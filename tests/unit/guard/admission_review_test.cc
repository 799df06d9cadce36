// Decoding AdmissionReview v1 (every field the guard reads, every way it can be wrong) and the
// response the API server expects.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "guard_fixtures.h"
#include "shardscaler/guard/admission_review.h"

namespace shardscaler::guard {
namespace {

using ::testing::HasSubstr;
using testing::Json;

// A DELETE review as kube-apiserver 1.20 sends it.
Json deleteReview() {
  return Json::parse(R"({
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {
      "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
      "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
      "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
      "requestKind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
      "requestResource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
      "name": "prometheus-main-shard-1", "namespace": "monitoring", "operation": "DELETE",
      "userInfo": {"username": "user-1", "uid": "uid-user-1",
                   "groups": ["system:authenticated"]},
      "object": null,
      "oldObject": {"metadata": {"name": "prometheus-main-shard-1",
                                 "labels": {"shardscaler.io/shardset": "main"}}},
      "dryRun": true,
      "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                  "propagationPolicy": "Foreground"}
    }})");
}

TEST(AdmissionReviewDecode, ReadsEveryFieldTheGuardUses) {
  auto r = decodeAdmissionReview(deleteReview().dump());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(r->group, "apps");
  EXPECT_EQ(r->version, "v1");
  EXPECT_EQ(r->resource, "statefulsets");
  EXPECT_EQ(r->sub_resource, "");
  EXPECT_EQ(r->ns, "monitoring");
  EXPECT_EQ(r->name, "prometheus-main-shard-1");
  EXPECT_EQ(r->operation, Operation::Delete);
  EXPECT_EQ(r->user.username, "user-1");
  EXPECT_EQ(r->user.groups, std::vector<std::string>{"system:authenticated"});
  EXPECT_TRUE(r->dry_run);
  EXPECT_TRUE(r->object.is_null());
  EXPECT_EQ(r->old_object["metadata"]["labels"]["shardscaler.io/shardset"], "main");
  EXPECT_EQ(r->field_manager, "");  // DeleteOptions have none
}

TEST(AdmissionReviewDecode, ReadsThePatchsFieldManager) {
  Json review = deleteReview();
  review["request"]["operation"] = "UPDATE";
  review["request"]["options"] = {
      {"kind", "PatchOptions"}, {"apiVersion", "meta.k8s.io/v1"}, {"fieldManager", "shardscaler"}};
  auto r = decodeAdmissionReview(review.dump());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->field_manager, "shardscaler");
}

TEST(AdmissionReviewDecode, OptionalFieldsMayBeAbsent) {
  Json review = deleteReview();
  auto& request = review["request"];
  for (const char* key : {"namespace", "name", "dryRun", "object", "oldObject", "userInfo"}) {
    request.erase(key);
  }
  request["resource"].erase("group");
  auto r = decodeAdmissionReview(review.dump());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->group, "");
  EXPECT_FALSE(r->dry_run);
  EXPECT_TRUE(r->old_object.is_null());
  EXPECT_EQ(r->user.username, "");
}

TEST(AdmissionReviewDecode, EachOperation) {
  for (const auto& [text, op] :
       std::vector<std::pair<std::string, Operation>>{{"CREATE", Operation::Create},
                                                      {"UPDATE", Operation::Update},
                                                      {"DELETE", Operation::Delete},
                                                      {"CONNECT", Operation::Connect}}) {
    Json review = deleteReview();
    review["request"]["operation"] = text;
    auto r = decodeAdmissionReview(review.dump());
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->operation, op);
    EXPECT_EQ(toString(op), text);
  }
}

struct BadCase {
  std::string what;
  std::function<void(Json&)> change;
  std::string error;
};

TEST(AdmissionReviewDecode, NamesWhatIsWrong) {
  const std::vector<BadCase> cases = {
      {"v1beta1", [](Json& j) { j["apiVersion"] = "admission.k8s.io/v1beta1"; },
       R"(AdmissionReview: apiVersion "admission.k8s.io/v1beta1" is not served (the webhook's )"
       R"(admissionReviewVersions must be [v1]))"},
      {"no apiVersion", [](Json& j) { j.erase("apiVersion"); },
       "AdmissionReview: apiVersion: missing"},
      {"apiVersion number", [](Json& j) { j["apiVersion"] = 1; },
       "AdmissionReview: apiVersion: expected a string, got number"},
      {"kind", [](Json& j) { j["kind"] = "Status"; },
       R"(AdmissionReview: kind "Status" is not AdmissionReview)"},
      {"no request", [](Json& j) { j.erase("request"); }, "AdmissionReview: request: missing"},
      {"request array", [](Json& j) { j["request"] = Json::array(); },
       "AdmissionReview: request: expected an object, got array"},
      {"no uid", [](Json& j) { j["request"].erase("uid"); },
       "AdmissionReview: request.uid: missing"},
      {"empty uid", [](Json& j) { j["request"]["uid"] = ""; },
       "AdmissionReview: request.uid: missing"},
      {"no resource", [](Json& j) { j["request"].erase("resource"); },
       "AdmissionReview: request.resource: missing"},
      {"resource without plural", [](Json& j) { j["request"]["resource"].erase("resource"); },
       "AdmissionReview: request.resource.resource: missing"},
      {"bad operation", [](Json& j) { j["request"]["operation"] = "PATCH"; },
       R"(AdmissionReview: request.operation: "PATCH" is not CREATE, UPDATE, DELETE or CONNECT)"},
      {"no operation", [](Json& j) { j["request"].erase("operation"); },
       "AdmissionReview: request.operation: missing"},
      {"groups not strings", [](Json& j) { j["request"]["userInfo"]["groups"] = {1}; },
       "AdmissionReview: request.userInfo.groups: entries must be strings"},
      {"username number", [](Json& j) { j["request"]["userInfo"]["username"] = 7; },
       "AdmissionReview: request.userInfo.username: expected a string, got number"},
      {"dryRun string", [](Json& j) { j["request"]["dryRun"] = "yes"; },
       "AdmissionReview: request.dryRun: expected a boolean"},
      {"oldObject string", [](Json& j) { j["request"]["oldObject"] = "x"; },
       "AdmissionReview: request.oldObject: expected an object, got string"},
      {"namespace object", [](Json& j) { j["request"]["namespace"] = Json::object(); },
       "AdmissionReview: request.namespace: expected a string, got object"},
      {"options string", [](Json& j) { j["request"]["options"] = "x"; },
       "AdmissionReview: request.options: expected an object, got string"},
      {"fieldManager number", [](Json& j) { j["request"]["options"]["fieldManager"] = 1; },
       "AdmissionReview: request.options.fieldManager: expected a string, got number"},
      // What the guard reads of the objects: as the API server would have sent it.
      {"oldObject name number", [](Json& j) { j["request"]["oldObject"]["metadata"]["name"] = 12; },
       "AdmissionReview: request.oldObject.metadata.name: expected a string, got number"},
      {"oldObject name object",
       [](Json& j) { j["request"]["oldObject"]["metadata"]["name"] = Json::object(); },
       "AdmissionReview: request.oldObject.metadata.name: expected a string, got object"},
      {"oldObject name not a name",
       [](Json& j) { j["request"]["oldObject"]["metadata"]["name"] = "../../secrets/x"; },
       "AdmissionReview: request.oldObject.metadata.name: not a valid name"},
      {"oldObject without metadata", [](Json& j) { j["request"]["oldObject"].erase("metadata"); },
       "AdmissionReview: request.oldObject.metadata: missing"},
      {"oldObject metadata array",
       [](Json& j) { j["request"]["oldObject"]["metadata"] = Json::array(); },
       "AdmissionReview: request.oldObject.metadata: expected an object, got array"},
      {"label value number",
       [](Json& j) {
         j["request"]["oldObject"]["metadata"]["labels"]["operator.prometheus.io/shard"] = 1;
       },
       "AdmissionReview: request.oldObject.metadata.labels: values must be strings"},
      {"label value with a slash",
       [](Json& j) {
         j["request"]["oldObject"]["metadata"]["labels"]["shardscaler.io/shardset"] = "../x";
       },
       "AdmissionReview: request.oldObject.metadata.labels: holds a key or value that is not a "
       "valid label"},
      {"labels array", [](Json& j) { j["request"]["oldObject"]["metadata"]["labels"] = {1}; },
       "AdmissionReview: request.oldObject.metadata.labels: expected an object, got array"},
      {"annotation value bool",
       [](Json& j) { j["request"]["oldObject"]["metadata"]["annotations"]["x"] = true; },
       "AdmissionReview: request.oldObject.metadata.annotations: values must be strings"},
      {"object name number",
       [](Json& j) {
         j["request"]["operation"] = "UPDATE";
         j["request"]["object"] = {{"metadata", {{"name", 3}}}};
       },
       "AdmissionReview: request.object.metadata.name: expected a string, got number"},
      {"request name not a name", [](Json& j) { j["request"]["name"] = "a/b"; },
       "AdmissionReview: request.name: not a valid name"},
      {"request namespace not a namespace", [](Json& j) { j["request"]["namespace"] = "NS!"; },
       "AdmissionReview: request.namespace: not a valid namespace"},
      // A value repeated in an error is cut short and made printable.
      {"long operation", [](Json& j) { j["request"]["operation"] = "\n" + std::string(100, 'X'); },
       "AdmissionReview: request.operation: \"?" + std::string(63, 'X') +
           "...(37 more bytes)\" is not CREATE, UPDATE, DELETE or CONNECT"},
  };
  for (const auto& c : cases) {
    Json review = deleteReview();
    c.change(review);
    auto r = decodeAdmissionReview(review.dump());
    ASSERT_FALSE(r) << c.what;
    EXPECT_EQ(r.error(), c.error) << c.what;
  }
}

TEST(AdmissionReviewDecode, RejectsWhatIsNotAReviewAtAll) {
  EXPECT_EQ(decodeAdmissionReview("").error(),
            "AdmissionReview: empty body (expected a JSON AdmissionReview)");
  EXPECT_EQ(decodeAdmissionReview("{\"apiVersion\":").error(),
            "AdmissionReview: body is not valid JSON");
  EXPECT_EQ(decodeAdmissionReview("[1,2]").error(), "AdmissionReview: expected a JSON object");
  EXPECT_EQ(decodeAdmissionReview("\xff\xfe").error(), "AdmissionReview: body is not valid JSON");
  EXPECT_EQ(decodeAdmissionReview(std::string(100000, '[')).error(),
            "AdmissionReview: JSON nested deeper than 128 levels");
  // Brackets inside strings do not count.
  Json review = deleteReview();
  review["request"]["oldObject"]["metadata"]["annotations"] = {{"x", std::string(500, '[')}};
  EXPECT_TRUE(decodeAdmissionReview(review.dump()));
  const std::string huge(kMaxReviewBytes + 1, ' ');
  EXPECT_THAT(decodeAdmissionReview(huge).error(), HasSubstr("exceeds the limit of"));
  // Many small values cost far more parsed than their text: refused before parsing.
  std::string many = "[";
  for (int i = 0; i < 100001; ++i) many += "[],";
  many += "[]]";
  EXPECT_EQ(decodeAdmissionReview(many).error(), "AdmissionReview: more than 100000 JSON values");
  // Commas inside strings do not count.
  Json commas = deleteReview();
  commas["request"]["oldObject"]["metadata"]["annotations"] = {{"x", std::string(200000, ',')}};
  EXPECT_TRUE(decodeAdmissionReview(commas.dump()));
}

TEST(AdmissionReviewDecode, OtherResourcesAreNotHeldToStatefulSetNames) {
  Json review = deleteReview();
  review["request"]["resource"] = {
      {"group", "rbac.authorization.k8s.io"}, {"version", "v1"}, {"resource", "clusterroles"}};
  review["request"]["name"] = "system:aggregate-to-edit";
  review["request"]["oldObject"]["metadata"]["name"] = "system:aggregate-to-edit";
  EXPECT_TRUE(decodeAdmissionReview(review.dump()));
  review["request"]["oldObject"]["metadata"]["name"] = 1;
  EXPECT_FALSE(decodeAdmissionReview(review.dump()));
}

TEST(AdmissionReviewEncode, DenialCarriesUidCodeReasonAndMessage) {
  const Json denied = Json::parse(encodeAdmissionResponse(
      "705ab4f5", AdmissionAnswer{.allowed = false, .message = "shardscaler guard: rule X"}));
  EXPECT_EQ(denied, Json::parse(R"({
      "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
      "response": {"uid": "705ab4f5", "allowed": false,
                   "status": {"code": 403, "reason": "Forbidden",
                              "message": "shardscaler guard: rule X"}}})"));
}

TEST(AdmissionReviewEncode, AllowedIsJustThat) {
  const Json allowed = Json::parse(encodeAdmissionResponse("u", AdmissionAnswer{}));
  EXPECT_EQ(allowed["response"], Json::parse(R"({"uid": "u", "allowed": true})"));
}

TEST(AdmissionReviewEncode, InvalidUtf8InTheMessageDoesNotThrow) {
  const std::string out =
      encodeAdmissionResponse("u", AdmissionAnswer{.allowed = false, .message = "bad \xff byte"});
  EXPECT_FALSE(Json::parse(out, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace shardscaler::guard
