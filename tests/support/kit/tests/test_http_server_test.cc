#include "shardscaler/test_kit/test_http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace shardscaler::test_kit {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace std::chrono_literals;

constexpr auto kClientLimit = 5s;

// A client for the tests below: one connection, every operation bounded by kClientLimit.
class TestClient {
 public:
  explicit TestClient(const HttpServer& server) {
    stream_.expires_after(kClientLimit);
    stream_.async_connect(asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(),
                                                  static_cast<unsigned short>(server.port())),
                          [this](beast::error_code ec) { last_ = ec; });
    run();
    EXPECT_FALSE(last_) << last_.message();
  }

  beast::error_code send(const http::request<http::string_body>& request) {
    stream_.expires_after(kClientLimit);
    http::async_write(stream_, request, [this](beast::error_code ec, size_t) { last_ = ec; });
    run();
    return last_;
  }
  beast::error_code sendRaw(const std::string& bytes) {
    stream_.expires_after(kClientLimit);
    asio::async_write(stream_, asio::buffer(bytes),
                      [this](beast::error_code ec, size_t) { last_ = ec; });
    run();
    return last_;
  }
  // The next response, or the error that ended the read.
  beast::error_code read(http::response<http::string_body>& response) {
    stream_.expires_after(kClientLimit);
    http::async_read(stream_, buffer_, response,
                     [this](beast::error_code ec, size_t) { last_ = ec; });
    run();
    return last_;
  }
  // Every byte until the server closes the connection (or kClientLimit passes: not "eof").
  std::pair<std::string, beast::error_code> readToEnd() {
    std::string bytes;
    auto into = asio::dynamic_buffer(bytes);
    stream_.expires_after(kClientLimit);
    asio::async_read(stream_, into, [this](beast::error_code ec, size_t) { last_ = ec; });
    run();
    return {bytes, last_};
  }
  void close() { stream_.close(); }

 private:
  void run() {
    io_.restart();
    io_.run();
  }

  asio::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  beast::error_code last_;
};

http::request<http::string_body> makeRequest(http::verb verb, const std::string& target,
                                             const std::string& body = "") {
  http::request<http::string_body> request(verb, target, 11);
  request.set(http::field::host, "127.0.0.1");
  request.body() = body;
  request.prepare_payload();
  return request;
}

TEST(HttpServer, RecordsEachRequestAndKeepsTheConnectionAlive) {
  HttpServer server([](const HttpRequest& request) {
    return HttpResponse{.status = 201, .body = request.method + " " + request.path};
  });
  EXPECT_TRUE(server.url().starts_with("http://127.0.0.1:"));
  TestClient client(server);
  auto get = makeRequest(http::verb::get, "/a/b?x=1%2B1&y=two+words&flag");
  get.set("X-Custom", "Value");
  ASSERT_FALSE(client.send(get));
  http::response<http::string_body> first;
  ASSERT_FALSE(client.read(first));
  EXPECT_EQ(first.result_int(), 201);
  EXPECT_EQ(first.reason(), "Created");
  EXPECT_EQ(first[http::field::content_type], "application/json");
  EXPECT_EQ(first.body(), "GET /a/b");

  auto post = makeRequest(http::verb::post, "/form?x=from-query", "x=from-body&q=a%20b");
  post.set(http::field::content_type, "application/x-www-form-urlencoded");
  ASSERT_FALSE(client.send(post));
  http::response<http::string_body> second;
  ASSERT_FALSE(client.read(second));
  EXPECT_EQ(second.body(), "POST /form");

  ASSERT_TRUE(server.waitForRequests(2, kClientLimit));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].target, "/a/b?x=1%2B1&y=two+words&flag");
  EXPECT_EQ(requests[0].query,
            (std::map<std::string, std::string>{{"x", "1+1"}, {"y", "two words"}, {"flag", ""}}));
  EXPECT_EQ(requests[0].header("x-custom"), "Value");
  EXPECT_EQ(requests[0].header("X-CUSTOM"), "Value");
  EXPECT_EQ(requests[0].header("absent"), "");
  EXPECT_EQ(requests[1].body, "x=from-body&q=a%20b");
  EXPECT_EQ(requests[1].query.at("x"), "from-query");
  EXPECT_EQ(requests[1].params,
            (std::map<std::string, std::string>{{"x", "from-body"}, {"q", "a b"}}));
  EXPECT_EQ(requests[0].connection, 1);
  EXPECT_EQ(requests[1].connection, 1);
  EXPECT_EQ(server.connectionsAccepted(), 1);
  EXPECT_EQ(server.lastRequest().path, "/form");
  EXPECT_FALSE(server.waitForRequests(3, 10ms));
}

TEST(HttpServer, ExtraHeadersAndClosingTheConnection) {
  HttpServer server([](const HttpRequest&) {
    return HttpResponse{.status = 429,
                        .body = "slow down",
                        .content_type = "text/plain",
                        .headers = {{"Retry-After", "4"}},
                        .close_connection = true};
  });
  TestClient client(server);
  ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/")));
  http::response<http::string_body> response;
  ASSERT_FALSE(client.read(response));
  EXPECT_EQ(response.result_int(), 429);
  EXPECT_EQ(response[http::field::retry_after], "4");
  EXPECT_EQ(response[http::field::content_type], "text/plain");
  EXPECT_FALSE(response.keep_alive());
  EXPECT_EQ(client.readToEnd().second, asio::error::eof);
}

TEST(HttpServer, EachPieceIsOneChunkOnTheWire) {
  HttpServer server([](const HttpRequest&, HttpExchange& exchange) {
    exchange.closeAfter();
    exchange.startChunked(200, {{"X-Stream", "1"}});
    exchange.chunk("abc");
    exchange.chunk("");
    exchange.chunk("0123456789abcdefg");
    exchange.endChunked();
  });
  TestClient client(server);
  ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/watch")));
  auto [bytes, ec] = client.readToEnd();
  EXPECT_EQ(ec, asio::error::eof);
  EXPECT_TRUE(bytes.starts_with("HTTP/1.1 200 OK\r\n")) << bytes;
  EXPECT_NE(bytes.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("X-Stream: 1\r\n"), std::string::npos) << bytes;
  EXPECT_TRUE(bytes.ends_with("\r\n\r\n3\r\nabc\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n")) << bytes;
}

TEST(HttpServer, AnUnendedChunkedBodyIsCutWhenTheHandlerCloses) {
  HttpServer server([](const HttpRequest&, HttpExchange& exchange) {
    exchange.startChunked(200);
    exchange.chunk("{\"type\":\"ADDED\"}\n");
    exchange.closeAfter();
  });
  TestClient client(server);
  ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/watch")));
  auto [bytes, ec] = client.readToEnd();
  EXPECT_EQ(ec, asio::error::eof);
  EXPECT_TRUE(bytes.ends_with("\r\n\r\n11\r\n{\"type\":\"ADDED\"}\n\r\n")) << bytes;
}

TEST(HttpServer, AHandlerThatAnswersNothingClosesTheConnection) {
  HttpServer server([](const HttpRequest&, HttpExchange&) {});
  TestClient client(server);
  ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/")));
  auto [bytes, ec] = client.readToEnd();
  EXPECT_EQ(ec, asio::error::eof);
  EXPECT_EQ(bytes, "");
}

TEST(HttpServer, HoldUntilClientClosesSeesTheClientLeaveOrGivesUp) {
  std::promise<bool> closed_seen;
  std::promise<bool> gave_up;
  HttpServer server([&](const HttpRequest& request, HttpExchange& exchange) {
    if (request.path == "/wait") {
      closed_seen.set_value(exchange.holdUntilClientCloses(10s));
    } else {
      gave_up.set_value(exchange.holdUntilClientCloses(50ms));
    }
  });
  {
    TestClient client(server);
    ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/wait")));
    ASSERT_TRUE(server.waitForRequests(1, kClientLimit));
    ASSERT_FALSE(client.sendRaw("bytes the server drops"));
    client.close();
  }
  auto closed = closed_seen.get_future();
  ASSERT_EQ(closed.wait_for(kClientLimit), std::future_status::ready);
  EXPECT_TRUE(closed.get());

  TestClient client(server);
  ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/short")));
  auto result = gave_up.get_future();
  ASSERT_EQ(result.wait_for(kClientLimit), std::future_status::ready);
  EXPECT_FALSE(result.get());
  EXPECT_EQ(client.readToEnd().first, "");  // nothing was sent, and the connection is closed
}

TEST(HttpServer, HeldResponsesWaitForRelease) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = "late", .hold = true}; });
  TestClient client(server);
  ASSERT_FALSE(client.send(makeRequest(http::verb::get, "/")));
  ASSERT_TRUE(server.waitForHeld(1, kClientLimit));
  EXPECT_FALSE(server.waitForHeld(2, 10ms));
  server.releaseHeld();
  http::response<http::string_body> response;
  ASSERT_FALSE(client.read(response));
  EXPECT_EQ(response.body(), "late");
  EXPECT_TRUE(server.waitForHeld(0, kClientLimit));
}

TEST(HttpServer, StoppingEndsHoldsAndOpenConnectionsPromptly) {
  std::atomic<int> holds_ended{0};
  auto server =
      std::make_unique<HttpServer>([&](const HttpRequest& request, HttpExchange& exchange) {
        if (request.path == "/client") {
          if (exchange.holdUntilClientCloses(60s)) ++holds_ended;
        } else {
          if (exchange.holdUntilReleased(60s)) ++holds_ended;
        }
      });
  TestClient idle(*server);  // connected, never sends
  TestClient holding_for_client(*server);
  TestClient holding_for_release(*server);
  ASSERT_FALSE(holding_for_client.send(makeRequest(http::verb::get, "/client")));
  ASSERT_FALSE(holding_for_release.send(makeRequest(http::verb::get, "/release")));
  ASSERT_TRUE(server->waitForHeld(1, kClientLimit));
  ASSERT_TRUE(server->waitForRequests(2, kClientLimit));
  const auto started = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  EXPECT_EQ(holds_ended.load(), 2);
  EXPECT_EQ(idle.readToEnd().second, asio::error::eof);
}

}  // namespace
}  // namespace shardscaler::test_kit
