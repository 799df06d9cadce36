// HttpServer on 127.0.0.1 against libcurl clients that trust only the test CA: routing, TLS
// versions, certificate hot swap, client certificates (off, optional, required, trust changed at
// run time), limits, handler failures, handlers off the I/O thread, and a bounded stop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "../certificates/tls_test_support.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/test_kit/raw_tls_client.h"

namespace shardscaler::serving {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test_kit::ClientRequest;
using test_kit::requestOnce;
using ::testing::HasSubstr;

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServer::Options options() {
    HttpServer::Options o;
    o.address = {"127.0.0.1", 0};
    o.certificates = slot_;
    o.workers = 2;
    o.degraded = [this](std::string_view reason) {
      std::lock_guard lock(mutex_);
      degraded_.insert(std::string(reason));
    };
    o.observer = [this](const RequestRecord& record) {
      std::lock_guard lock(mutex_);
      records_.push_back({std::string(record.method), std::string(record.route), record.status});
    };
    return o;
  }
  void start(HttpServer& server) {
    auto port = server.start();
    ASSERT_TRUE(port.has_value()) << port.error();
    ASSERT_NE(*port, 0);
    port_ = *port;
  }
  ClientRequest request(const std::string& path, const std::string& ca_pem = {}) {
    ClientRequest r;
    r.url = "https://127.0.0.1:" + std::to_string(port_) + path;
    r.ca_pem = ca_pem.empty() ? pki_.ca.certificate().pem() : ca_pem;
    return r;
  }
  bool degradedEventually(const std::string& reason) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mutex_);
        if (degraded_.contains(reason)) return true;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    return false;
  }

  struct Record {
    std::string method;
    std::string route;
    int status;
  };

  certificates::testing::TestPki pki_ = certificates::testing::makeTestPki();
  std::shared_ptr<certificates::CertificateSlot> slot_ =
      std::make_shared<certificates::CertificateSlot>(pki_.serving);
  std::uint16_t port_ = 0;
  std::mutex mutex_;
  std::set<std::string> degraded_;
  std::vector<Record> records_;
};

Handler echo() {
  return [](const Request& r) {
    return Response::text(200, r.method + " " + r.path + " ?" + r.query + " " + r.body + " " +
                                   std::string(r.header("x-test").value_or("-")));
  };
}

TEST_F(HttpServerTest, ServesARouteOverTls13ToAClientThatVerifiesTheCa) {
  HttpServer server(options());
  server.handle("POST", "/validate", echo());
  start(server);
  auto r = request("/validate?timeout=10s");
  r.method = "POST";
  r.body = R"({"kind":"AdmissionReview"})";
  r.headers = {"X-Test: yes", "Content-Type: application/json"};
  const auto reply = requestOnce(r);
  ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, R"(POST /validate ?timeout=10s {"kind":"AdmissionReview"} yes)");
  EXPECT_EQ(reply.tls_version, "TLSv1.3");
  EXPECT_EQ(certificates::testing::serverFingerprint(reply), pki_.serving->leaf().fingerprint());
  server.stop();
  std::lock_guard lock(mutex_);
  ASSERT_EQ(records_.size(), 1U);
  EXPECT_EQ(records_[0].method, "POST");
  EXPECT_EQ(records_[0].route, "/validate");
  EXPECT_EQ(records_[0].status, 200);
}

TEST_F(HttpServerTest, ServesTls12ButNothingOlder) {
  HttpServer server(options());
  server.handle("GET", "/", echo());
  start(server);
  auto tls12 = request("/");
  tls12.ssl_version = long{CURL_SSLVERSION_TLSv1_2} | long{CURL_SSLVERSION_MAX_TLSv1_2};
  const auto reply = requestOnce(tls12);
  ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
  EXPECT_EQ(reply.tls_version, "TLSv1.2");
  auto tls11 = request("/");
  tls11.ssl_version = long{CURL_SSLVERSION_TLSv1_0} | long{CURL_SSLVERSION_MAX_TLSv1_1};
  EXPECT_NE(requestOnce(tls11).code, CURLE_OK);
}

TEST_F(HttpServerTest, AClientThatTrustsAnotherCaFailsAndTheServerSaysSo) {
  HttpServer server(options());
  server.handle("GET", "/", echo());
  start(server);
  const auto stranger = certificates::testing::makeTestPki("stranger");
  const auto reply = requestOnce(request("/", stranger.ca.certificate().pem()));
  EXPECT_EQ(reply.code, CURLE_PEER_FAILED_VERIFICATION) << reply.error;
  EXPECT_TRUE(degradedEventually("https_handshake_failed"));
}

TEST_F(HttpServerTest, RoutesExactPathsBeforePrefixesAndAnswers404And405) {
  HttpServer server(options());
  server.handle("GET", "/apis/exact", [](const Request&) { return Response::text(200, "exact"); });
  server.handlePrefix("*", "/apis/", [](const Request& r) { return Response::text(200, r.path); });
  server.handlePrefix("GET", "/apis/external.metrics.k8s.io/",
                      [](const Request&) { return Response::text(200, "longer"); });
  server.handle("GET", "/only-get", echo());
  start(server);
  EXPECT_EQ(requestOnce(request("/apis/exact")).body, "exact");
  EXPECT_EQ(requestOnce(request("/apis/a/b")).body, "/apis/a/b");
  EXPECT_EQ(requestOnce(request("/apis/external.metrics.k8s.io/v1beta1")).body, "longer");
  auto post = request("/apis/a");
  post.method = "DELETE";
  EXPECT_EQ(requestOnce(post).body, "/apis/a");
  const auto missing = requestOnce(request("/nope"));
  EXPECT_EQ(missing.status, 404);
  auto wrong = request("/only-get");
  wrong.method = "POST";
  const auto not_allowed = requestOnce(wrong);
  EXPECT_EQ(not_allowed.status, 405);
}

TEST_F(HttpServerTest, ANewCertificateIsUsedByTheNextHandshake) {
  HttpServer server(options());
  server.handle("GET", "/", echo());
  start(server);
  test_kit::HttpClient kept;
  ASSERT_EQ(kept.perform(request("/")).code, CURLE_OK);
  ASSERT_EQ(certificates::testing::serverFingerprint(requestOnce(request("/"))),
            pki_.serving->leaf().fingerprint());

  const auto next = certificates::testing::makeTestPki("next-ca");
  ASSERT_TRUE(slot_->set(next.serving));
  const auto fresh = requestOnce(request("/", next.ca.certificate().pem()));
  ASSERT_EQ(fresh.code, CURLE_OK) << fresh.error;
  EXPECT_EQ(certificates::testing::serverFingerprint(fresh), next.serving->leaf().fingerprint());
  EXPECT_EQ(requestOnce(request("/")).code, CURLE_PEER_FAILED_VERIFICATION);
  // A connection made before the swap goes on with the certificate it verified.
  const auto reused = kept.perform(request("/"));
  EXPECT_EQ(reused.code, CURLE_OK) << reused.error;
  EXPECT_EQ(reused.status, 200);
}

TEST_F(HttpServerTest, ConnectionsBeforeAnyCertificateAreClosedAndReported) {
  auto empty = std::make_shared<certificates::CertificateSlot>();
  auto o = options();
  o.certificates = empty;
  HttpServer server(o);
  server.handle("GET", "/", echo());
  start(server);
  EXPECT_NE(requestOnce(request("/")).code, CURLE_OK);
  EXPECT_TRUE(degradedEventually("https_no_certificate"));
  empty->set(pki_.serving);
  EXPECT_EQ(requestOnce(request("/")).code, CURLE_OK);
}

class HttpsClientCertificateTest : public HttpServerTest {
 protected:
  void startWith(ClientCertificateMode mode,
                 std::shared_ptr<const certificates::TrustBundle> trust) {
    trust_ = std::make_shared<certificates::TrustBundleSlot>(std::move(trust));
    auto o = options();
    o.client_certificates = mode;
    o.client_trust = trust_;
    server_ = std::make_unique<HttpServer>(o);
    server_->handle("GET", "/whoami", [](const Request& r) {
      std::string groups;
      for (const auto& g : r.peer.organizations) groups += g + ";";
      return Response::text(200, (r.peer.verified ? "verified " : "anonymous ") +
                                     r.peer.subject_common_name + " " + groups +
                                     std::to_string(r.peer.chain.size()));
    });
    start(*server_);
  }
  ClientRequest withCertificate(const certificates::KeyedCertificate& client) {
    auto r = request("/whoami");
    r.client_certificate_pem = client.certificate.pem();
    r.client_key_pem = client.key.pem();
    return r;
  }

  certificates::testing::TestPki clients_ = certificates::testing::makeTestPki("front-proxy-ca");
  std::shared_ptr<certificates::TrustBundleSlot> trust_;
  std::unique_ptr<HttpServer> server_;
};

std::shared_ptr<const certificates::TrustBundle> bundleOf(
    const certificates::CertificateAuthority& ca) {
  return certificates::TrustBundle::fromPem(ca.certificate().pem()).value();
}

TEST_F(HttpsClientCertificateTest, RequiredCertificatesMustVerifyAndReachTheHandler) {
  startWith(ClientCertificateMode::Require, bundleOf(clients_.ca));
  const auto client = certificates::testing::issueClientCertificate(
      clients_.ca, "front-proxy-client", {"system:masters"});
  const auto ok = requestOnce(withCertificate(client));
  ASSERT_EQ(ok.code, CURLE_OK) << ok.error;
  EXPECT_EQ(ok.body, "verified front-proxy-client system:masters;2");

  EXPECT_NE(requestOnce(request("/whoami")).code, CURLE_OK);
  const auto stranger = certificates::testing::makeTestPki("stranger");
  const auto wrong = certificates::testing::issueClientCertificate(stranger.ca, "mallory");
  EXPECT_NE(requestOnce(withCertificate(wrong)).code, CURLE_OK);
  // A serving certificate of the trusted CA is not a client certificate.
  const auto server_cert =
      clients_.ca.issue({.common_name = "not-a-client",
                         .hosts = {"x"},
                         .not_before = std::chrono::system_clock::now() - std::chrono::hours(1),
                         .not_after = std::chrono::system_clock::now() + std::chrono::hours(1)});
  ASSERT_TRUE(server_cert.has_value());
  EXPECT_NE(requestOnce(withCertificate(*server_cert)).code, CURLE_OK);
}

TEST_F(HttpsClientCertificateTest, OptionalCertificatesAreVerifiedWhenGiven) {
  startWith(ClientCertificateMode::VerifyIfGiven, bundleOf(clients_.ca));
  const auto anonymous = requestOnce(request("/whoami"));
  ASSERT_EQ(anonymous.code, CURLE_OK) << anonymous.error;
  EXPECT_EQ(anonymous.body, "anonymous  0");
  const auto client = certificates::testing::issueClientCertificate(clients_.ca, "alice");
  EXPECT_EQ(requestOnce(withCertificate(client)).body, "verified alice 2");
  const auto stranger = certificates::testing::makeTestPki("stranger");
  EXPECT_NE(requestOnce(
                withCertificate(certificates::testing::issueClientCertificate(stranger.ca, "eve")))
                .code,
            CURLE_OK);
}

TEST_F(HttpsClientCertificateTest, RequestedCertificatesThatFailReachTheHandlerUnverified) {
  startWith(ClientCertificateMode::Request, bundleOf(clients_.ca));
  EXPECT_EQ(requestOnce(request("/whoami")).body, "anonymous  0");
  const auto client =
      certificates::testing::issueClientCertificate(clients_.ca, "front-proxy-client");
  EXPECT_EQ(requestOnce(withCertificate(client)).body, "verified front-proxy-client 2");
  // Another CA's certificate: the handshake succeeds (the handler answers 401 as an API server
  // would), but nothing of that certificate is passed on as verified.
  const auto stranger = certificates::testing::makeTestPki("stranger");
  const auto eve = requestOnce(
      withCertificate(certificates::testing::issueClientCertificate(stranger.ca, "eve")));
  ASSERT_EQ(eve.code, CURLE_OK) << eve.error;
  EXPECT_EQ(eve.body, "anonymous  0");
  // Before any CA is known, no certificate verifies.
  trust_->set(nullptr);
  EXPECT_EQ(requestOnce(withCertificate(client)).body, "anonymous  0");
}

TEST_F(HttpsClientCertificateTest, WithVerificationOffACertificateIsNeverTakenAsVerified) {
  auto o = options();
  HttpServer server(o);
  server.handle("GET", "/whoami", [](const Request& r) {
    return Response::text(200, r.peer.verified ? "verified" : "anonymous");
  });
  start(server);
  const auto client = certificates::testing::issueClientCertificate(clients_.ca, "alice");
  EXPECT_EQ(requestOnce(withCertificate(client)).body, "anonymous");
}

TEST_F(HttpsClientCertificateTest, TheTrustedCaCanChangeAtRunTime) {
  const auto old_ca = certificates::testing::makeTestPki("old-front-proxy-ca");
  startWith(ClientCertificateMode::Require, bundleOf(old_ca.ca));
  const auto client =
      certificates::testing::issueClientCertificate(clients_.ca, "front-proxy-client");
  EXPECT_NE(requestOnce(withCertificate(client)).code, CURLE_OK);
  trust_->set(bundleOf(clients_.ca));
  const auto reply = requestOnce(withCertificate(client));
  ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
  EXPECT_EQ(reply.body, "verified front-proxy-client 2");
}

TEST_F(HttpServerTest, OversizedHeadersAndBodiesGet431And413) {
  auto o = options();
  o.limits.max_header_bytes = 4096;
  o.limits.max_body_bytes = 1024;
  HttpServer server(o);
  server.handle("POST", "/", echo());
  start(server);
  auto big_header = request("/");
  big_header.method = "POST";
  big_header.headers = {"X-Big: " + std::string(8000, 'h')};
  EXPECT_EQ(requestOnce(big_header).status, 431);
  auto big_body = request("/");
  big_body.method = "POST";
  big_body.body = std::string(2048, 'b');
  EXPECT_EQ(requestOnce(big_body).status, 413);
  auto fits = request("/");
  fits.method = "POST";
  fits.body = std::string(1000, 'b');
  EXPECT_EQ(requestOnce(fits).status, 200);
}

TEST_F(HttpServerTest, AHandlerThatThrowsGives500) {
  HttpServer server(options());
  server.handle("GET", "/boom",
                [](const Request&) -> Response { throw std::runtime_error("kaboom"); });
  start(server);
  const auto reply = requestOnce(request("/boom"));
  EXPECT_EQ(reply.status, 500);
  EXPECT_THAT(reply.body, HasSubstr("internal error"));
  EXPECT_TRUE(degradedEventually("https_handler_failed"));
}

// /wait blocks until /release has run: only handlers on separate threads, off the I/O thread,
// can both finish. The wait is bounded, so a failure shows as "timed out", not a hang.
TEST_F(HttpServerTest, HandlersRunOnWorkersNotOnTheIoThread) {
  std::mutex mutex;
  std::condition_variable released_cv;
  bool released = false;
  HttpServer server(options());
  server.handle("GET", "/wait", [&](const Request&) {
    std::unique_lock lock(mutex);
    const bool ok = released_cv.wait_for(lock, seconds(10), [&] { return released; });
    return Response::text(200, ok ? "released" : "timed out");
  });
  server.handle("GET", "/release", [&](const Request&) {
    {
      std::lock_guard lock(mutex);
      released = true;
    }
    released_cv.notify_all();
    return Response::text(200, "ok");
  });
  start(server);
  auto waiting = std::async(std::launch::async, [&] { return requestOnce(request("/wait")); });
  EXPECT_EQ(requestOnce(request("/release")).body, "ok");
  EXPECT_EQ(waiting.get().body, "released");
}

TEST_F(HttpServerTest, StopIsQuickWhateverClientsDo) {
  HttpServer server(options());
  server.handle("GET", "/", echo());
  start(server);
  test_kit::HttpClient idle;  // a kept-alive connection after one request
  ASSERT_EQ(idle.perform(request("/")).code, CURLE_OK);
  test_kit::RawTlsClient no_handshake(port_, pki_.ca.certificate().pem());
  ASSERT_TRUE(no_handshake.connect());
  test_kit::RawTlsClient partial(port_, pki_.ca.certificate().pem());
  ASSERT_TRUE(partial.connect());
  ASSERT_TRUE(partial.handshake());
  ASSERT_TRUE(partial.send("GET / HTTP/1.1\r\nHost: x\r\n"));  // never finishes its headers

  const auto started = std::chrono::steady_clock::now();
  server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(1));
  EXPECT_TRUE(no_handshake.closedByServer());
  EXPECT_TRUE(partial.closedByServer());
  EXPECT_NE(requestOnce(request("/")).code, CURLE_OK);  // nothing listens any more
  server.stop();                                        // idempotent
}

TEST_F(HttpServerTest, BeginStopClosesAtOnceAndStopFinishes) {
  HttpServer server(options());
  server.handle("GET", "/", echo());
  start(server);
  test_kit::RawTlsClient partial(port_, pki_.ca.certificate().pem());
  ASSERT_TRUE(partial.connect());
  ASSERT_TRUE(partial.handshake());
  ASSERT_TRUE(partial.send("GET / HTTP/1.1\r\nHost: x\r\n"));  // never finishes its headers

  server.beginStop();  // returns without waiting for the connection
  server.beginStop();  // idempotent
  EXPECT_TRUE(partial.closedByServer());
  EXPECT_NE(requestOnce(request("/")).code, CURLE_OK);
  server.stop();
  server.stop();
}

TEST_F(HttpServerTest, ASlowClientIsCutAtTheReadTimeout) {
  auto o = options();
  o.limits.read_timeout = milliseconds(200);
  o.limits.handshake_timeout = milliseconds(200);
  HttpServer server(o);
  server.handle("GET", "/", echo());
  start(server);
  test_kit::RawTlsClient silent(port_, pki_.ca.certificate().pem());
  ASSERT_TRUE(silent.connect());
  EXPECT_TRUE(silent.closedByServer());  // never started the handshake
  test_kit::RawTlsClient slow(port_, pki_.ca.certificate().pem());
  ASSERT_TRUE(slow.connect());
  ASSERT_TRUE(slow.handshake());
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\n"));
  EXPECT_TRUE(slow.closedByServer());
}

TEST_F(HttpServerTest, StartNamesWhatIsMissingOrTaken) {
  auto o = options();
  o.certificates = nullptr;  // plain HTTP, which cannot verify client certificates
  o.client_certificates = ClientCertificateMode::Request;
  EXPECT_THAT(HttpServer(o).start().error(), HasSubstr("needs a certificate source"));
  o = options();
  o.client_certificates = ClientCertificateMode::Require;
  EXPECT_THAT(HttpServer(o).start().error(), HasSubstr("client trust bundle"));
  HttpServer first(options());
  start(first);
  o = options();
  o.address.port = port_;
  auto taken = HttpServer(o).start();
  ASSERT_FALSE(taken.has_value());
  EXPECT_THAT(taken.error(), HasSubstr("listen 127.0.0.1:" + std::to_string(port_)));
}

}  // namespace
}  // namespace shardscaler::serving
