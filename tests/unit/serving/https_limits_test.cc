// HttpServer against hostile and careless clients: bodies read only after routing and within the
// route's limit, chunk extensions and trailers bounded, bodies in flight bounded, idle connections
// giving way to new ones, the idle timeout, HTTP versions, TLS 1.2 session resumption with client
// certificates asked for, and health() when the I/O thread dies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "../certificates/tls_test_support.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/test_kit/raw_tls_client.h"

namespace shardscaler::serving {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test_kit::RawTlsClient;
using ::testing::HasSubstr;

class HttpsLimitsTest : public ::testing::Test {
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
    return o;
  }
  void start(HttpServer& server) {
    server.handle("POST", "/small",
                  [](const Request& r) {
                    return Response::text(200, "got " + std::to_string(r.body.size()));
                  },
                  {.max_body_bytes = 100});
    server.handle("POST", "/large", [](const Request& r) {
      return Response::text(200, "got " + std::to_string(r.body.size()));
    });
    server.handle("GET", "/", [](const Request& r) { return Response::text(200, r.method); });
    auto port = server.start();
    ASSERT_TRUE(port.has_value()) << port.error();
    port_ = *port;
  }
  std::unique_ptr<RawTlsClient> connected() {
    auto client = std::make_unique<RawTlsClient>(port_, pki_.ca.certificate().pem());
    EXPECT_TRUE(client->connect());
    EXPECT_TRUE(client->handshake()) << client->lastError();
    return client;
  }
  // The status the server answers to `bytes`, sent on a connection of their own.
  int statusFor(const std::string& bytes) {
    auto client = connected();
    if (!client->send(bytes)) return -1;
    return client->readResponse().status;
  }
  bool degraded(const std::string& reason) {
    std::lock_guard lock(mutex_);
    return degraded_.contains(reason);
  }

  certificates::testing::TestPki pki_ = certificates::testing::makeTestPki();
  std::shared_ptr<certificates::CertificateSlot> slot_ =
      std::make_shared<certificates::CertificateSlot>(pki_.serving);
  std::uint16_t port_ = 0;
  std::mutex mutex_;
  std::set<std::string> degraded_;
};

constexpr const char* kChunkedPost =
    "POST /large HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST_F(HttpsLimitsTest, ABodyIsReadOnlyAfterRoutingAndWithinTheRoutesLimit) {
  HttpServer server(options());
  start(server);
  // Announced beyond the route's limit: refused at once, with no byte of the body sent.
  EXPECT_EQ(statusFor("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"), 413);
  EXPECT_EQ(statusFor("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" +
                      std::string(100, 'b')),
            200);
  // Beyond every route's limit: refused before routing.
  EXPECT_EQ(statusFor("POST /large HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n"), 413);
  // No route: 404 without waiting for the body it announced.
  EXPECT_EQ(statusFor("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"), 404);
  // A chunked body is held to the route's limit as it arrives.
  EXPECT_EQ(statusFor("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "64\r\n" +
                      std::string(100, 'c') + "\r\n1\r\nc\r\n0\r\n\r\n"),
            413);
}

TEST_F(HttpsLimitsTest, ExpectContinueGetsA100BeforeTheBody) {
  HttpServer server(options());
  start(server);
  auto client = connected();
  ASSERT_TRUE(client->send(
      "POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(client->readResponse().status, 100);
  ASSERT_TRUE(client->send("abc"));
  const auto answer = client->readResponse();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "got 3");
}

// Beast counts chunk extensions against no limit: a client could send them for ever.
TEST_F(HttpsLimitsTest, ChunkExtensionsAreRefusedWithinTheFirstKilobytes) {
  HttpServer server(options());
  start(server);
  // Many small chunks, each with an extension: refused once they pass 1 KiB together.
  std::string many = kChunkedPost;
  for (int i = 0; i < 40; ++i) many += "1;ext=" + std::string(100, 'e') + "\r\nx\r\n";
  EXPECT_EQ(statusFor(many), 400);
  // One extension that never ends: refused once the line passes 8 KiB, unanswered for ever
  // before the fix.
  auto endless = connected();
  ASSERT_TRUE(
      endless->send(std::string(kChunkedPost) + "1;" + std::string(std::size_t{12} * 1024, 'e')));
  const auto answer = endless->readResponse();
  EXPECT_EQ(answer.status, 400);
  EXPECT_THAT(answer.body, HasSubstr("longer than 8192 bytes"));
  // Within the limits: served.
  EXPECT_EQ(statusFor(std::string(kChunkedPost) + "3;a=b\r\nabc\r\n0\r\n\r\n"), 200);
  EXPECT_TRUE(degraded("https_request_refused"));
}

TEST_F(HttpsLimitsTest, TrailersAreBounded) {
  HttpServer server(options());
  start(server);
  EXPECT_EQ(statusFor(std::string(kChunkedPost) +
                      "3\r\nabc\r\n0\r\nX-Trailer: " + std::string(2000, 't') + "\r\n\r\n"),
            431);
  EXPECT_EQ(statusFor(std::string(kChunkedPost) + "3\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n"), 200);
}

TEST_F(HttpsLimitsTest, VersionsAndGarbage) {
  HttpServer server(options());
  start(server);
  EXPECT_EQ(statusFor("GET / HTTP/2.0\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(statusFor("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 505);
  EXPECT_EQ(statusFor("GARBAGE\r\n\r\n"), 400);
  EXPECT_EQ(statusFor(std::string("\x16\x03\x01\x02\x00\r\n\r\n", 9)), 400);
  auto old = connected();
  ASSERT_TRUE(old->send("GET / HTTP/1.0\r\n\r\n"));
  const auto answer = old->readResponse();
  EXPECT_EQ(answer.status, 200);
  EXPECT_THAT(answer.head, HasSubstr("HTTP/1.1 200"));
  EXPECT_EQ(answer.body, "GET");
  EXPECT_TRUE(old->closedByServer());  // no keep-alive asked for
}

// /wait holds the body's share of the budget until released: a second body that would pass the
// total is refused before it is read, and served once the first is answered.
TEST_F(HttpsLimitsTest, BodiesInFlightAreBounded) {
  auto o = options();
  o.limits.max_body_bytes_in_flight = 1000;
  HttpServer server(o);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> waiting{0};
  server.handle("POST", "/wait", [&](const Request& r) {
    ++waiting;
    released.wait_for(seconds(10));
    return Response::text(200, std::to_string(r.body.size()));
  });
  start(server);
  const std::string post =
      "POST /wait HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\n" + std::string(800, 'b');
  auto first = connected();
  ASSERT_TRUE(first->send(post));
  ASSERT_TRUE(test_kit::eventually(seconds(5), [&] { return waiting.load() == 1; }));
  auto second = connected();
  ASSERT_TRUE(second->send(post));
  const auto busy = second->readResponse();
  EXPECT_EQ(busy.status, 503);
  EXPECT_THAT(busy.head, HasSubstr("Retry-After: 1"));
  EXPECT_TRUE(degraded("https_busy"));
  release.set_value();
  EXPECT_EQ(first->readResponse().body, "800");
  auto third = connected();
  ASSERT_TRUE(third->send(post));
  EXPECT_EQ(third->readResponse().status, 200);
}

TEST_F(HttpsLimitsTest, IdleConnectionsGiveWayAndBusyOnesDoNot) {
  auto o = options();
  o.limits.max_connections = 2;
  HttpServer server(o);
  start(server);
  auto idle_a = connected();
  auto idle_b = connected();
  // Both idle between requests (their handshakes surely done on the server's side too).
  for (auto* c : {idle_a.get(), idle_b.get()}) {
    ASSERT_TRUE(c->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(c->readResponse().status, 200);
  }
  // A third connection takes the place of the oldest idle one.
  auto third = connected();
  ASSERT_TRUE(third->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(third->readResponse().status, 200);
  EXPECT_TRUE(idle_a->closedByServer());
  EXPECT_TRUE(degraded("https_connection_evicted"));
  // Two connections in the middle of a request: a new one is refused.
  auto busy_b = std::move(idle_b);
  ASSERT_TRUE(busy_b->send("GET / HTTP/1.1\r\n"));
  ASSERT_TRUE(third->send("GET / HTTP/1.1\r\n"));
  RawTlsClient refused(port_, pki_.ca.certificate().pem());
  ASSERT_TRUE(refused.connect());
  EXPECT_FALSE(refused.handshake());
  EXPECT_TRUE(test_kit::eventually(seconds(5), [&] { return degraded("https_connection_limit"); }));
}

TEST_F(HttpsLimitsTest, AConnectionThatSendsNothingIsClosedAtTheIdleTimeout) {
  auto o = options();
  o.limits.idle_timeout = milliseconds(200);
  HttpServer server(o);
  start(server);
  auto idle = connected();
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle->closedByServer());
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(3));
}

// Without a session id context, OpenSSL ends a resumed TLS 1.2 handshake with a fatal alert
// whenever client certificates are asked for (the external metrics API asks for them).
TEST_F(HttpsLimitsTest, Tls12SessionsResumeWithClientCertificatesAsked) {
  for (const auto mode : {ClientCertificateMode::Request, ClientCertificateMode::None}) {
    auto o = options();
    o.client_certificates = mode;
    o.client_trust = std::make_shared<certificates::TrustBundleSlot>(nullptr);
    HttpServer server(o);
    start(server);
    test_kit::HttpClient client;  // keeps the TLS session between connections
    test_kit::ClientRequest r;
    r.url = "https://127.0.0.1:" + std::to_string(port_) + "/";
    r.ca_pem = pki_.ca.certificate().pem();
    r.ssl_version = long{CURL_SSLVERSION_TLSv1_2} | long{CURL_SSLVERSION_MAX_TLSv1_2};
    r.headers = {"Connection: close"};
    const auto first = client.perform(r);
    ASSERT_EQ(first.code, CURLE_OK) << first.error;
    EXPECT_FALSE(first.tls_session_reused);
    const auto second = client.perform(r);
    ASSERT_EQ(second.code, CURLE_OK) << second.error;
    EXPECT_EQ(second.status, 200);
    EXPECT_EQ(second.tls_version, "TLSv1.2");
    EXPECT_TRUE(second.tls_session_reused);
  }
}

TEST_F(HttpsLimitsTest, Tls11IsRefused) {
  HttpServer server(options());
  start(server);
  RawTlsClient old(port_, RawTlsClient::Options{.ca_pem = pki_.ca.certificate().pem(),
                                                .min_version = TLS1_VERSION,
                                                .max_version = TLS1_1_VERSION});
  ASSERT_TRUE(old.connect());
  EXPECT_FALSE(old.handshake());
}

TEST_F(HttpsLimitsTest, HealthFailsWhenTheIoThreadDies) {
  auto o = options();
  o.observer = [](const RequestRecord&) { throw std::runtime_error("observer blew up"); };
  HttpServer server(o);
  EXPECT_FALSE(server.health());  // not started
  start(server);
  EXPECT_TRUE(server.health()) << server.health().error();
  auto client = connected();
  ASSERT_TRUE(client->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  client->readResponse();
  std::string why;
  EXPECT_TRUE(test_kit::eventually(seconds(5), [&] {
    auto health = server.health();
    if (!health) why = health.error();
    return !health;
  }));
  EXPECT_THAT(why, HasSubstr("I/O thread has stopped: observer blew up"));
}

}  // namespace
}  // namespace shardscaler::serving
