// libFuzzer target: the external metrics API's front-proxy authentication and request routing.
// An input that starts with '{' is the authentication alone: parts (fuzz_input.h) the
// request-header ConfigMap kube-system/extension-apiserver-authentication (JSON), the headers
// ("Name: value" lines), the peer ("verified CN" or anything else). Any other input is one request
// end to end, as MetricsApiHandler answers it: authentication, routing, the SubjectAccessReview
// and its answer, the ShardSets read and the values computed from them, the JSON of every answer.
// Its parts: "METHOD TARGET" and "Name: value" header lines; the peer; what creating the
// SubjectAccessReview returns; what reading ShardSets returns (JSON, else NotFound).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/metrics_api/access_review.h"
#include "shardscaler/metrics_api/front_proxy.h"
#include "shardscaler/metrics_api/metrics_api_handler.h"

namespace {

namespace k8s = shardscaler::k8s;
using k8s::Json;

k8s::Result<Json> notFound() {
  return k8s::makeError(k8s::ErrorKind::NotFound, "not found (fuzz)");
}

// Answers reads and the review's creation from the input; refuses everything else.
class ScriptedClient final : public k8s::KubeClient {
 public:
  ScriptedClient(std::string_view review, std::string_view shard_sets)
      : review_(shardscaler::fuzz::json(review)),
        shard_sets_(shardscaler::fuzz::json(shard_sets)) {}

  k8s::Result<Json> get(const k8s::Resource&, const std::string&, const std::string&,
                        const std::string&) override {
    if (!shard_sets_.is_object()) return notFound();
    return shard_sets_;
  }
  k8s::Result<Json> list(const k8s::Resource&, const std::string&,
                         const k8s::ListOptions&) override {
    if (shard_sets_.is_discarded()) return notFound();
    return Json{{"metadata", Json::object()},
                {"items", shard_sets_.is_array() ? shard_sets_ : Json::array({shard_sets_})}};
  }
  k8s::Result<Json> create(const k8s::Resource&, const std::string&, const Json& obj) override {
    (void)obj.dump();  // what RestClient sends
    if (review_.is_discarded()) return k8s::makeError(k8s::ErrorKind::Transport, "refused (fuzz)");
    return review_;
  }
  k8s::Result<Json> update(const k8s::Resource&, const std::string&, const Json&,
                           const std::string&) override {
    return notFound();
  }
  k8s::Result<Json> patch(const k8s::Resource&, const std::string&, const std::string&,
                          k8s::PatchType, const Json&, const std::string&) override {
    return notFound();
  }
  k8s::Result<Json> remove(const k8s::Resource&, const std::string&, const std::string&,
                           const k8s::DeleteOptions&) override {
    return notFound();
  }
  k8s::Result<void> watch(const k8s::Resource&, const std::string&, const k8s::WatchOptions&,
                          const k8s::WatchHandler&, const std::atomic<bool>*) override {
    return k8s::makeError(k8s::ErrorKind::Transport, "no watch (fuzz)");
  }

 private:
  Json review_;
  Json shard_sets_;
};

using shardscaler::metrics_api::RequestHeaderConfig;

// The API server's defaults, with a CA of its own, for inputs whose ConfigMap does not parse.
const RequestHeaderConfig& defaultConfig() {
  static const RequestHeaderConfig config = [] {
    const auto now = std::chrono::system_clock::now();
    auto ca = shardscaler::certificates::CertificateAuthority::generate(
        "front-proxy-ca", now, now + std::chrono::hours(24));
    if (!ca) __builtin_trap();
    RequestHeaderConfig c;
    auto bundle = shardscaler::certificates::TrustBundle::fromPem(ca->certificate().pem());
    if (!bundle) __builtin_trap();
    c.client_ca = std::move(*bundle);
    c.allowed_names = {"front-proxy-client"};
    c.username_headers = {"X-Remote-User"};
    c.group_headers = {"X-Remote-Group"};
    c.extra_header_prefixes = {"X-Remote-Extra-"};
    return c;
  }();
  return config;
}

// The authentication alone, under the ConfigMap of the input's first part.
void authenticateOnly(std::string_view input) {
  namespace fuzz = shardscaler::fuzz;
  const auto p = fuzz::parts(input, 3);
  const nlohmann::json config_map = fuzz::json(p[0]);
  std::optional<RequestHeaderConfig> parsed;
  if (!config_map.is_discarded()) {
    auto read = shardscaler::metrics_api::requestHeaderConfigFromConfigMap(config_map);
    if (read) parsed = std::move(*read);
  }
  RequestHeaderConfig config = parsed.value_or(defaultConfig());
  if (!config.client_ca) config.client_ca = defaultConfig().client_ca;

  shardscaler::serving::HeaderList headers;
  for (std::string_view line : fuzz::lines(p[1])) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  shardscaler::serving::PeerCertificate peer;
  if (p[2].starts_with("verified ")) {
    peer.verified = true;
    peer.subject_common_name = std::string(p[2].substr(9));
  }
  auto user = shardscaler::metrics_api::authenticate(peer, headers, config);
  if (!user) return;
  // Only a verified peer with an allowed name is ever a user.
  if (!peer.verified) __builtin_trap();
  // What the handler does next with the user: the SubjectAccessReview and its cache key.
  const shardscaler::metrics_api::AccessRequest access{
      *user, shardscaler::metrics_api::NonResourceAttributes{"/apis", "get"}};
  (void)shardscaler::metrics_api::AccessDecisionCache::keyOf(access);
  (void)shardscaler::metrics_api::subjectAccessReview(access).dump();
}

// The request path's settings: the defaults above.
const shardscaler::metrics_api::RequestHeaderConfigSlot& configSlot() {
  static const auto* slot = [] {
    auto* s = new shardscaler::metrics_api::RequestHeaderConfigSlot();
    s->set(std::make_shared<RequestHeaderConfig>(defaultConfig()));
    return s;
  }();
  return *slot;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fuzz = shardscaler::fuzz;
  namespace serving = shardscaler::serving;
  if (size > 0 && data[0] == '{') {
    authenticateOnly(fuzz::text(data, size));
    return 0;
  }
  const auto p = fuzz::parts(fuzz::text(data, size), 4);
  const auto head = fuzz::lines(p[0]);
  if (head.empty()) return 0;
  serving::Request request;
  const std::size_t space = head[0].find(' ');
  request.method = std::string(head[0].substr(0, space));
  request.target = space == std::string_view::npos ? "/" : std::string(head[0].substr(space + 1));
  const std::size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  request.query = question == std::string::npos ? "" : request.target.substr(question + 1);
  for (std::size_t i = 1; i < head.size(); ++i) {
    const std::size_t colon = head[i].find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = head[i].substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    request.headers.emplace_back(std::string(head[i].substr(0, colon)), std::string(value));
  }
  if (p[1].starts_with("verified ")) {
    request.peer.verified = true;
    request.peer.subject_common_name = std::string(p[1].substr(9));
  }
  ScriptedClient client(p[2], p[3]);
  // 2027-01-15T08:00:00Z, the time of the seeds' lastUpdate.
  static k8s::ManualClock clock(
      std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)));
  shardscaler::metrics_api::MetricsApiHandler handler(client, clock, configSlot(), {});
  const serving::Response response = handler.handle(request);
  // Every answer is the API's: a status a client understands and, but for 304, a JSON body.
  if (response.status < 200 || response.status > 599) __builtin_trap();
  if (response.status != 304 && fuzz::json(response.body).is_discarded()) __builtin_trap();
  return 0;
}
