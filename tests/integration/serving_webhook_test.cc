// End to end with the real kube-apiserver (1.20): it calls a validating webhook served by
// HttpServer at https://127.0.0.1:<port>/validate, trusting the caBundle the injector keeps
// current, while the certificate Secret rotates every few seconds, CA included. The injector sees
// the Secret a second late, as a leader replica that polls later than the serving one would. Every
// DELETE of the guarded ConfigMap must reach the handler and be denied by it: a TLS failure at any
// rotation shows up as "failed calling webhook" and fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "serving_test_support.h"
#include "shardscaler/certificates/ca_bundle_injector.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::certificates::integration {
namespace {

// The waits look every 100 ms, as they did before the kit.
constexpr std::chrono::milliseconds kWaitPoll{100};

using serving::HttpServer;
using serving::Request;
using serving::Response;
using std::chrono::milliseconds;
using std::chrono::seconds;

const k8s::Resource kConfigMaps{"", "v1", "configmaps", true};
constexpr std::string_view kDenial = "serving-test guard keeps configmap ";

// A trivial guard: every DELETE it is asked about is denied, naming the object.
Response denyDeletes(const Request& request, std::atomic<int>& calls) {
  const Json review = Json::parse(request.body, nullptr, false);
  if (review.is_discarded() || !review.contains("request")) {
    return Response::text(400, "not an AdmissionReview\n");
  }
  ++calls;
  const Json& admission = review["request"];
  Json response = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"response",
       {{"uid", admission.value("uid", "")},
        {"allowed", false},
        {"status",
         {{"code", 403}, {"message", std::string(kDenial) + admission.value("name", "")}}}}}};
  return Response::json(200, response.dump());
}

// Republishes what `source` serves `lag` later: the view of a replica that re-reads the Secret
// after the serving one does.
class LaggingSource {
 public:
  LaggingSource(std::shared_ptr<CertificateSource> source, milliseconds lag)
      : source_(std::move(source)), lag_(lag), thread_([this] { run(); }) {}
  ~LaggingSource() {
    stop_ = true;
    thread_.join();
  }
  std::shared_ptr<CertificateSlot> slot() const { return slot_; }

 private:
  void run() {
    std::deque<
        std::pair<std::chrono::steady_clock::time_point, std::shared_ptr<const ServingCertificate>>>
        pending;
    while (!stop_) {
      const auto now = std::chrono::steady_clock::now();
      auto current = source_->current();
      if (current && (pending.empty() || pending.back().second != current)) {
        pending.emplace_back(now, current);
      }
      while (!pending.empty() && pending.front().first + lag_ <= now) {
        slot_->set(pending.front().second);
        pending.pop_front();
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  }

  std::shared_ptr<CertificateSource> source_;
  milliseconds lag_;
  std::shared_ptr<CertificateSlot> slot_ = std::make_shared<CertificateSlot>();
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Json webhookConfiguration(const std::string& name, const std::string& ns, std::uint16_t port) {
  return Json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": ")" +
                     name + R"("},
    "webhooks": [{
      "name": "guard.serving.shardscaler.io",
      "clientConfig": {"url": "https://127.0.0.1:)" +
                     std::to_string(port) + R"(/validate"},
      "rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["configmaps"]}],
      "objectSelector": {"matchLabels": {"serving-guard": ")" +
                     ns + R"("}},
      "failurePolicy": "Fail",
      "sideEffects": "None",
      "timeoutSeconds": 5,
      "admissionReviewVersions": ["v1"]}]})");
}

TEST(ServingWebhook, TheApiServerCallsTheWebhookThroughEveryRotation) {
  const std::string ns = createTestNamespace("webhook");
  const auto clock = std::make_shared<k8s::RealClock>();
  auto options = storeOptions(ns);
  options.rotation = secondsPolicy();
  auto store = std::make_shared<SecretCertificateStore>(adminClient(), clock, options);
  store->start();
  ASSERT_TRUE(
      test_kit::eventually(seconds(10), kWaitPoll, [&] { return store->current() != nullptr; }));

  std::atomic<int> calls{0};
  HttpServer::Options server_options;
  server_options.address = {"127.0.0.1", 0};
  server_options.certificates = store;
  // Idle connections close between attempts, so every attempt is a new TLS handshake against
  // the caBundle the API server holds at that moment (a kept-alive connection was verified once).
  server_options.limits.idle_timeout = milliseconds(100);
  HttpServer server(server_options);
  server.handle("POST", "/validate", [&](const Request& r) { return denyDeletes(r, calls); });
  auto port = server.start();
  ASSERT_TRUE(port.has_value()) << port.error();

  const auto target = CaBundleTarget::validatingWebhookConfiguration(ns + "-guard");
  ASSERT_TRUE(adminClient()
                  .create(target.resource, "", webhookConfiguration(target.name, ns, *port))
                  .has_value());
  // However the test ends, the webhook goes: nothing else on the control plane may meet it.
  struct RemoveWebhook {
    const CaBundleTarget& target;
    ~RemoveWebhook() { (void)adminClient().remove(target.resource, "", target.name); }
  } remove_webhook{target};
  CaBundleInjectorOptions injector_options;
  injector_options.targets = {target};
  injector_options.resync_period = milliseconds(500);
  // Half the 2 s the policy lets a new CA propagate before it signs what is served.
  LaggingSource leader_view(store, milliseconds(1000));
  CaBundleInjector injector(adminClient(), leader_view.slot(), clock, injector_options);
  injector.start();

  const Json guarded = {{"apiVersion", "v1"},
                        {"kind", "ConfigMap"},
                        {"metadata", {{"name", "keep-me"}, {"labels", {{"serving-guard", ns}}}}}};
  ASSERT_TRUE(adminClient().create(kConfigMaps, ns, guarded).has_value());
  const auto deleteGuarded = [&] { return adminClient().remove(kConfigMaps, ns, "keep-me"); };
  const auto deniedByUs = [](const k8s::Result<Json>& result) {
    return !result && result.error().message.find(kDenial) != std::string::npos;
  };
  // The API server picks up the injected caBundle from its own watch.
  ASSERT_TRUE(
      test_kit::eventually(seconds(20), kWaitPoll, [&] { return deniedByUs(deleteGuarded()); }));

  int attempts = 0;
  std::vector<std::string> failures;
  std::set<std::string> certificates;
  std::set<std::string> cas;
  // 24 s of the seconds policy: the serving certificate rotates every 6 s, the CA changes at
  // about 9 s and 18 s after creation, switching 2 s later, and old CAs leave the bundle.
  const auto until = std::chrono::steady_clock::now() + seconds(24);
  while (std::chrono::steady_clock::now() < until) {
    const auto current = store->current();
    certificates.insert(current->leaf().fingerprint());
    cas.insert(current->caBundle().front().fingerprint());
    auto result = deleteGuarded();
    ++attempts;
    if (!deniedByUs(result)) {
      failures.push_back(result ? "deleted!" : result.error().describe());
    }
    std::this_thread::sleep_for(milliseconds(250));
  }
  for (const auto& failure : failures) ADD_FAILURE() << failure;
  EXPECT_GE(attempts, 40);
  EXPECT_GE(certificates.size(), 3U) << "serving certificates crossed";
  EXPECT_GE(cas.size(), 2U) << "a CA change crossed";
  EXPECT_GE(calls.load(), attempts);

  // The guard is scoped by its selector: an unlabelled ConfigMap goes.
  ASSERT_TRUE(
      adminClient()
          .create(kConfigMaps, ns,
                  {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "free"}}}})
          .has_value());
  EXPECT_TRUE(adminClient().remove(kConfigMaps, ns, "free").has_value());

  injector.stop();
  server.stop();
  store->stop();
}

}  // namespace
}  // namespace shardscaler::certificates::integration
