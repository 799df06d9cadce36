// The status endpoints against a real client on 127.0.0.1: routes, HEAD, keep-alive, listeners,
// bad and oversized requests, limits, and a stop that does not wait for clients.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "shardscaler/app/status_endpoints.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr auto kClientTimeout = 5s;

// A client whose every operation ends within kClientTimeout (tcp_stream expiry).
class TestClient {
 public:
  explicit TestClient(std::uint16_t port) : port_(port) {}

  beast::error_code connect() {
    stream_.expires_after(kClientTimeout);
    beast::error_code result;
    stream_.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_),
                          [&](beast::error_code ec) { result = ec; });
    run();
    return result;
  }

  beast::error_code sendRaw(const std::string& bytes) {
    stream_.expires_after(kClientTimeout);
    beast::error_code result;
    asio::async_write(stream_, asio::buffer(bytes),
                      [&](beast::error_code ec, std::size_t) { result = ec; });
    run();
    return result;
  }

  struct Reply {
    beast::error_code ec;
    http::response<http::string_body> res;
  };

  Reply read(bool head = false) {
    Reply reply;
    http::response_parser<http::string_body> parser;
    parser.skip(head);
    parser.body_limit(std::uint64_t{16} << 20);
    stream_.expires_after(kClientTimeout);
    http::async_read(stream_, buffer_, parser,
                     [&](beast::error_code ec, std::size_t) { reply.ec = ec; });
    run();
    if (!reply.ec) reply.res = parser.release();
    return reply;
  }

  Reply request(http::verb verb, const std::string& target, bool keep_alive = true,
                unsigned version = 11) {
    http::request<http::string_body> req(verb, target, version);
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(keep_alive);
    req.prepare_payload();
    stream_.expires_after(kClientTimeout);
    beast::error_code write_ec;
    http::async_write(stream_, req, [&](beast::error_code ec, std::size_t) { write_ec = ec; });
    run();
    if (write_ec) return {write_ec, {}};
    return read(verb == http::verb::head);
  }

  // True when the server closed the connection: a read ends with EOF (or a reset), not a
  // timeout.
  bool closedByServer() {
    char byte = 0;
    beast::error_code result;
    stream_.expires_after(kClientTimeout);
    stream_.async_read_some(asio::buffer(&byte, 1),
                            [&](beast::error_code ec, std::size_t) { result = ec; });
    run();
    return result == asio::error::eof || result == asio::error::connection_reset;
  }

 private:
  void run() {
    ioc_.restart();
    ioc_.run();
  }

  std::uint16_t port_;
  asio::io_context ioc_;
  beast::tcp_stream stream_{ioc_};
  beast::flat_buffer buffer_;
};

TestClient::Reply get(std::uint16_t port, const std::string& target,
                      http::verb verb = http::verb::get) {
  TestClient c(port);
  if (auto ec = c.connect()) return {ec, {}};
  return c.request(verb, target, false);
}

const serving::BindAddress kLoopback{"127.0.0.1", 0};
constexpr Endpoints kAll{.metrics = true, .probes = true};

class StatusEndpointsTest : public ::testing::Test {
 protected:
  StatusEndpoints::Handlers handlers() {
    return {.metrics = [] { return std::string("# HELP x y\n# TYPE x gauge\nx 1\n"); },
            .readiness = [this]() -> Expected<void> {
              if (ready_) return {};
              return std::unexpected(std::string("informers not synced"));
            },
            .degraded =
                [this](std::string_view reason) {
                  std::lock_guard lock(mutex_);
                  degraded_.emplace_back(reason);
                }};
  }
  std::vector<std::string> degraded() {
    std::lock_guard lock(mutex_);
    return degraded_;
  }
  // Binds every endpoint to one loopback port and starts: the port, or why not.
  static Expected<std::uint16_t> serveAll(StatusEndpoints& server) {
    auto port = server.listen(kLoopback, kAll);
    if (!port) return port;
    if (auto started = server.start(); !started) return std::unexpected(started.error());
    return port;
  }

  std::atomic<bool> ready_{false};
  std::mutex mutex_;
  std::vector<std::string> degraded_;
};

TEST_F(StatusEndpointsTest, ServesMetricsHealthAndReadiness) {
  StatusEndpoints server(handlers());
  auto port = server.listen(kLoopback, kAll);
  ASSERT_TRUE(port) << port.error();
  ASSERT_NE(*port, 0);
  ASSERT_TRUE(server.start());

  auto metrics = get(*port, "/metrics");
  ASSERT_FALSE(metrics.ec) << metrics.ec.message();
  EXPECT_EQ(metrics.res.result(), http::status::ok);
  EXPECT_EQ(metrics.res[http::field::content_type], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics.res.body(), "# HELP x y\n# TYPE x gauge\nx 1\n");
  EXPECT_EQ(get(*port, "/metrics?name[]=x").res.result(), http::status::ok);

  auto health = get(*port, "/healthz");
  EXPECT_EQ(health.res.result(), http::status::ok);
  EXPECT_EQ(health.res.body(), "ok");

  auto not_ready = get(*port, "/readyz");
  EXPECT_EQ(not_ready.res.result(), http::status::service_unavailable);
  EXPECT_EQ(not_ready.res.body(), "informers not synced\n");
  ready_ = true;
  auto ready = get(*port, "/readyz");
  EXPECT_EQ(ready.res.result(), http::status::ok);
  EXPECT_EQ(ready.res.body(), "ok");

  EXPECT_EQ(get(*port, "/").res.result(), http::status::not_found);
  EXPECT_EQ(get(*port, "/metrics/extra").res.result(), http::status::not_found);
  auto post = get(*port, "/metrics", http::verb::post);
  EXPECT_EQ(post.res.result(), http::status::method_not_allowed);
  EXPECT_EQ(post.res[http::field::allow], "GET, HEAD");
}

TEST_F(StatusEndpointsTest, HeadSendsGetHeadersWithoutBody) {
  StatusEndpoints server(handlers());
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  TestClient c(*port);
  ASSERT_FALSE(c.connect());
  auto head = c.request(http::verb::head, "/metrics");
  ASSERT_FALSE(head.ec) << head.ec.message();
  EXPECT_EQ(head.res.result(), http::status::ok);
  EXPECT_EQ(head.res[http::field::content_length], "30");  // the /metrics body's size
  EXPECT_EQ(head.res.body(), "");
  // Had a body been sent after the HEAD headers, this GET would read it as garbage.
  auto next = c.request(http::verb::get, "/healthz");
  ASSERT_FALSE(next.ec) << next.ec.message();
  EXPECT_EQ(next.res.body(), "ok");
}

TEST_F(StatusEndpointsTest, KeepAliveServesManyRequestsOnOneConnection) {
  StatusEndpoints server(handlers());
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  TestClient c(*port);
  ASSERT_FALSE(c.connect());
  for (int i = 0; i < 20; ++i) {
    auto r = c.request(http::verb::get, i % 2 ? "/healthz" : "/metrics");
    ASSERT_FALSE(r.ec) << i << ": " << r.ec.message();
    EXPECT_EQ(r.res.result(), http::status::ok);
    EXPECT_TRUE(r.res.keep_alive());
  }
  auto last = c.request(http::verb::get, "/healthz", /*keep_alive=*/false);
  ASSERT_FALSE(last.ec);
  EXPECT_FALSE(last.res.keep_alive());
  EXPECT_TRUE(c.closedByServer());

  TestClient old(*port);
  ASSERT_FALSE(old.connect());
  auto r10 = old.request(http::verb::get, "/healthz", /*keep_alive=*/false, /*version=*/10);
  ASSERT_FALSE(r10.ec);
  EXPECT_EQ(r10.res.version(), 11u);  // the highest version served (RFC 9110, 6.2)
  EXPECT_TRUE(old.closedByServer());
}

TEST_F(StatusEndpointsTest, SeparateListenersServeTheirOwnEndpoints) {
  StatusEndpoints server(handlers());
  auto metrics_port = server.listen(kLoopback, {.metrics = true});
  auto probe_port = server.listen(kLoopback, {.probes = true});
  ASSERT_TRUE(metrics_port && probe_port);
  EXPECT_NE(*metrics_port, *probe_port);
  ASSERT_TRUE(server.start());
  EXPECT_EQ(get(*metrics_port, "/metrics").res.result(), http::status::ok);
  EXPECT_EQ(get(*metrics_port, "/healthz").res.result(), http::status::not_found);
  EXPECT_EQ(get(*probe_port, "/healthz").res.result(), http::status::ok);
  EXPECT_EQ(get(*probe_port, "/metrics").res.result(), http::status::not_found);
}

TEST_F(StatusEndpointsTest, SameAddressTwiceSharesOneListener) {
  StatusEndpoints server(handlers());
  auto first = server.listen(kLoopback, {.metrics = true});
  ASSERT_TRUE(first);
  auto second = server.listen(serving::BindAddress{"127.0.0.1", *first}, {.probes = true});
  ASSERT_TRUE(second) << second.error();
  EXPECT_EQ(*second, *first);
  ASSERT_TRUE(server.start());
  EXPECT_EQ(get(*first, "/metrics").res.result(), http::status::ok);
  EXPECT_EQ(get(*first, "/healthz").res.result(), http::status::ok);
}

TEST_F(StatusEndpointsTest, AllInterfacesAndBindErrors) {
  StatusEndpoints server(handlers());
  auto any = server.listen(serving::BindAddress{"", 0}, kAll);
  ASSERT_TRUE(any) << any.error();
  ASSERT_TRUE(server.start());
  EXPECT_EQ(get(*any, "/healthz").res.result(), http::status::ok);

  StatusEndpoints taken(handlers());
  auto port = taken.listen(kLoopback, kAll);
  ASSERT_TRUE(port);
  StatusEndpoints clash(handlers());
  auto err = clash.listen(serving::BindAddress{"127.0.0.1", *port}, kAll);
  ASSERT_FALSE(err);
  EXPECT_EQ(err.error(), "listen 127.0.0.1:" + std::to_string(*port) + ": Address already in use");
  auto bad_host = clash.listen(serving::BindAddress{"no-such-host.invalid", 0}, kAll);
  ASSERT_FALSE(bad_host);
  EXPECT_THAT(bad_host.error(), HasSubstr("listen no-such-host.invalid:0: "));
}

TEST_F(StatusEndpointsTest, BadRequestsGetAnErrorAndTheServerCarriesOn) {
  auto limits = StatusEndpoints::defaultLimits();
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 100;
  StatusEndpoints server(handlers(), limits);
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();

  struct Case {
    std::string bytes;
    http::status want;
  };
  const std::vector<Case> cases = {
      {"GARBAGE\r\n\r\n", http::status::bad_request},
      {"GET /healthz HTTP/9.9\r\n\r\n", http::status::http_version_not_supported},
      {"GET /healthz HTTP/2.0\r\n\r\n", http::status::http_version_not_supported},
      {"GET /healthz HTTP/1.1\r\nContent-Length: x\r\n\r\n", http::status::bad_request},
      {"GET /healthz HTTP/1.1\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n",
       http::status::request_header_fields_too_large},
      {"GET /healthz HTTP/1.1\r\nContent-Length: 100000\r\n\r\n", http::status::payload_too_large},
      {std::string("GET /\0 HTTP/1.1\r\n\r\n", 19), http::status::bad_request},
  };
  for (const auto& c : cases) {
    TestClient client(*port);
    ASSERT_FALSE(client.connect());
    ASSERT_FALSE(client.sendRaw(c.bytes));
    auto r = client.read();
    ASSERT_FALSE(r.ec) << r.ec.message() << " for " << c.bytes.substr(0, 40);
    EXPECT_EQ(r.res.result(), c.want) << c.bytes.substr(0, 40);
    EXPECT_FALSE(r.res.keep_alive());
    EXPECT_TRUE(client.closedByServer());
  }
  // A client that vanishes mid-request.
  {
    TestClient client(*port);
    ASSERT_FALSE(client.connect());
    ASSERT_FALSE(client.sendRaw("GET /metrics HTTP/1.1\r\nHost: x\r\n"));
  }
  EXPECT_EQ(get(*port, "/healthz").res.result(), http::status::ok);
}

TEST_F(StatusEndpointsTest, FailingMetricsHandlerIs500AndDegraded) {
  auto h = handlers();
  h.metrics = []() -> std::string { throw std::runtime_error("registry gone"); };
  StatusEndpoints server(h);
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  auto r = get(*port, "/metrics");
  EXPECT_EQ(r.res.result(), http::status::internal_server_error);
  EXPECT_EQ(r.res.body(), "internal error\n");
  EXPECT_EQ(degraded(), std::vector<std::string>{"http_handler_failed"});
}

TEST_F(StatusEndpointsTest, AtTheConnectionLimitIdleConnectionsGiveWayAndBusyOnesDoNot) {
  auto limits = StatusEndpoints::defaultLimits();
  limits.max_connections = 2;
  StatusEndpoints server(handlers(), limits);
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  TestClient a(*port);
  TestClient b(*port);
  ASSERT_FALSE(a.connect());
  ASSERT_FALSE(b.connect());
  // A full request on each proves the server has accepted both; both are idle now.
  ASSERT_FALSE(a.request(http::verb::get, "/healthz").ec);
  ASSERT_FALSE(b.request(http::verb::get, "/healthz").ec);
  // A third takes the place of the oldest idle one.
  TestClient c(*port);
  ASSERT_FALSE(c.connect());
  EXPECT_EQ(c.request(http::verb::get, "/healthz").res.result(), http::status::ok);
  EXPECT_TRUE(a.closedByServer());
  EXPECT_EQ(degraded(), std::vector<std::string>{"http_connection_evicted"});
  // Both in the middle of a request: a new connection is closed at once.
  ASSERT_FALSE(b.sendRaw("GET /metrics HTTP/1.1\r\n"));
  ASSERT_FALSE(c.sendRaw("GET /metrics HTTP/1.1\r\n"));
  TestClient d(*port);
  ASSERT_FALSE(d.connect());
  EXPECT_TRUE(d.closedByServer());
  EXPECT_TRUE(test_kit::eventually(5s, [&] {
    const auto seen = degraded();
    return std::ranges::find(seen, "http_connection_limit") != seen.end();
  }));
}

// The probes have a listener, a thread and connection slots of their own: clients that hold every
// slot of the metrics listener (or a metrics handler that blocks) leave /healthz and /readyz
// answering.
TEST_F(StatusEndpointsTest, MetricsTrafficCannotStarveTheProbes) {
  std::atomic<bool> release{false};
  auto h = handlers();
  h.metrics = [&] {
    test_kit::eventually(10s, [&] { return release.load(); });
    return std::string("x 1\n");
  };
  ready_ = true;
  auto limits = StatusEndpoints::defaultLimits();
  limits.max_connections = 4;
  StatusEndpoints server(h, limits);
  auto metrics_port = server.listen(kLoopback, {.metrics = true});
  auto probe_port = server.listen(kLoopback, {.probes = true});
  ASSERT_TRUE(metrics_port && probe_port);
  ASSERT_TRUE(server.start());
  // One scrape blocks the metrics thread; four half-sent requests hold every metrics slot.
  auto scrape = std::async(std::launch::async, [&] { return get(*metrics_port, "/metrics"); });
  std::vector<std::unique_ptr<TestClient>> hogs;
  for (int i = 0; i < 4; ++i) {
    hogs.push_back(std::make_unique<TestClient>(*metrics_port));
    ASSERT_FALSE(hogs.back()->connect());
    ASSERT_FALSE(hogs.back()->sendRaw("GET /metrics HTTP/1.1\r\n"));
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(get(*probe_port, "/healthz").res.result(), http::status::ok) << i;
    EXPECT_EQ(get(*probe_port, "/readyz").res.result(), http::status::ok) << i;
  }
  release = true;
  EXPECT_EQ(scrape.get().res.result(), http::status::ok);
}

TEST_F(StatusEndpointsTest, HealthzFailsWhenTheLivenessCheckDoes) {
  std::atomic<bool> alive{true};
  auto h = handlers();
  h.liveness = [&]() -> Expected<void> {
    if (alive) return {};
    return std::unexpected(std::string("the HTTPS server's I/O thread has stopped: boom"));
  };
  StatusEndpoints server(h);
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  EXPECT_EQ(get(*port, "/healthz").res.result(), http::status::ok);
  alive = false;
  const auto dead = get(*port, "/healthz");
  EXPECT_EQ(dead.res.result(), http::status::internal_server_error);
  EXPECT_EQ(dead.res.body(), "the HTTPS server's I/O thread has stopped: boom\n");
}

TEST_F(StatusEndpointsTest, ChunkExtensionsAndTrailersAreBounded) {
  StatusEndpoints server(handlers());
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  const std::string chunked = "GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string many = chunked;
  for (int i = 0; i < 40; ++i) many += "1;e=" + std::string(100, 'e') + "\r\nx\r\n";
  std::string endless = chunked + "1;" + std::string(std::size_t{12} * 1024, 'e');
  std::string trailer = chunked + "1\r\nx\r\n0\r\nX-T: " + std::string(2000, 't') + "\r\n\r\n";
  for (const auto& [bytes, want] : std::vector<std::pair<std::string, http::status>>{
           {many, http::status::bad_request},
           {endless, http::status::bad_request},
           {trailer, http::status::request_header_fields_too_large}}) {
    TestClient client(*port);
    ASSERT_FALSE(client.connect());
    ASSERT_FALSE(client.sendRaw(bytes));
    auto r = client.read();
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.res.result(), want) << bytes.substr(0, 80);
  }
  EXPECT_EQ(get(*port, "/healthz").res.result(), http::status::ok);
}

TEST_F(StatusEndpointsTest, SlowAndIdleConnectionsTimeOut) {
  auto limits = StatusEndpoints::defaultLimits();
  limits.read_timeout = 100ms;
  limits.idle_timeout = 100ms;
  StatusEndpoints server(handlers(), limits);
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  TestClient slow(*port);
  ASSERT_FALSE(slow.connect());
  ASSERT_FALSE(slow.sendRaw("GET /healthz HTTP/1.1\r\n"));  // never finishes its headers
  EXPECT_TRUE(slow.closedByServer());                       // within kClientTimeout
  TestClient silent(*port);
  ASSERT_FALSE(silent.connect());
  EXPECT_TRUE(silent.closedByServer());
}

TEST_F(StatusEndpointsTest, StopIsQuickWhateverClientsDo) {
  StatusEndpoints server(handlers());
  auto port = serveAll(server);
  ASSERT_TRUE(port) << port.error();
  TestClient idle(*port);
  ASSERT_FALSE(idle.connect());
  ASSERT_FALSE(idle.request(http::verb::get, "/healthz").ec);  // now an idle keep-alive
  TestClient partial(*port);
  ASSERT_FALSE(partial.connect());
  ASSERT_FALSE(partial.sendRaw("GET /metrics HTTP/1.1\r\n"));
  ASSERT_FALSE(get(*port, "/healthz").ec);  // the server has read what partial sent

  const auto started = std::chrono::steady_clock::now();
  server.stop();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, 1s);
  EXPECT_TRUE(idle.closedByServer());
  EXPECT_TRUE(partial.closedByServer());
  TestClient after(*port);
  EXPECT_TRUE(after.connect());  // refused: nothing listens any more
  server.stop();                 // idempotent
}

TEST_F(StatusEndpointsTest, StopBeforeStartAndDestructionWithoutStop) {
  {
    StatusEndpoints server(handlers());
    ASSERT_TRUE(server.listen(kLoopback, kAll));
    server.stop();
    EXPECT_TRUE(server.start());  // a stopped server stays stopped, quietly
  }
  {
    StatusEndpoints server(handlers());
    auto port = serveAll(server);
    ASSERT_TRUE(port) << port.error();
    EXPECT_EQ(get(*port, "/healthz").res.result(), http::status::ok);
  }  // the destructor stops it
}

}  // namespace
}  // namespace shardscaler::app
