// The one HTTP/1.1 test server (Boost.Beast) on 127.0.0.1, port 0: a handler per request that
// answers whole, streams chunks, holds or cuts the connection. It never listens beyond loopback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace shardscaler::test_kit {

// Bounds the waits a handler does not bound itself: one write to a client that does not read,
// and a Response{.hold = true} nobody releases.
inline constexpr std::chrono::seconds kHttpWriteLimit{10};
inline constexpr std::chrono::seconds kHttpHoldLimit{60};

struct HttpRequest {
  std::string method{};
  std::string target{};                          // path and query, as sent
  std::string path{};                            // without the query
  std::map<std::string, std::string> query{};    // from the target, percent-decoded
  std::map<std::string, std::string> headers{};  // names lower-cased
  std::string body{};
  // The query and, for an application/x-www-form-urlencoded body, the body's fields (the body
  // wins), as a Prometheus or Go server reads its form parameters.
  std::map<std::string, std::string> params{};
  int connection = 0;  // 1 for the first accepted connection, 2 for the next ...

  std::string header(const std::string& name) const;  // "" when absent; any case
};

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 200;
  std::string body{};
  std::string content_type = "application/json";
  HttpHeaders headers{};
  bool close_connection = false;
  // Answer only after HttpServer::releaseHeld(), the server stopping or kHttpHoldLimit (for
  // client-timeout tests).
  bool hold = false;
};

class HttpServer;

// The handler's side of one request on one connection. Each call returns false once the
// connection is gone (the client closed it, a write timed out, the server is stopping).
class HttpExchange {
 public:
  // A whole response with Content-Length (holding first when response.hold).
  bool respond(const HttpResponse& response);
  bool respond(int status, std::string_view body, const HttpHeaders& headers = {},
               std::string_view content_type = "application/json");
  // A chunked response, written piece by piece, each piece one chunk on the wire.
  bool startChunked(int status, const HttpHeaders& headers = {},
                    std::string_view content_type = "application/json");
  bool chunk(std::string_view bytes);  // an empty piece is skipped: it would end the body
  bool endChunked();
  // Sends nothing until the client closes the connection or the server stops (true), or
  // `limit` passes (false, and the connection is closed). Bytes the client sends meanwhile are
  // read and dropped.
  bool holdUntilClientCloses(std::chrono::milliseconds limit);
  // Sends nothing until HttpServer::releaseHeld() or the server stops (true), or `limit`
  // passes (false); HttpServer::waitForHeld() counts the exchanges waiting here.
  bool holdUntilReleased(std::chrono::milliseconds limit);
  // Closes the connection after this exchange instead of keeping it alive; a chunked body not
  // ended by then is cut short. A handler that leaves its response unfinished closes it too.
  void closeAfter() { close_after_ = true; }

 private:
  friend class HttpServer;
  struct Connection;
  HttpExchange(HttpServer& server, Connection& connection) : server_(server), conn_(connection) {}

  HttpServer& server_;
  Connection& conn_;
  bool close_after_ = false;
  bool finished_ = false;  // a whole response went out
};

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpExchange&)>;
  using Responder = std::function<HttpResponse(const HttpRequest&)>;

  // Listens on 127.0.0.1:0; throws boost::system::system_error when it cannot.
  explicit HttpServer(Handler handler);
  explicit HttpServer(Responder responder);
  // Stops accepting, closes every connection, releases holds and joins every thread.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connectionsAccepted() const { return connections_accepted_.load(); }

  // Every request read so far, in arrival order, recorded before its handler runs.
  std::vector<HttpRequest> requests() const;
  HttpRequest lastRequest() const;  // an empty request when none came
  // True once `count` requests have arrived, false after `limit`.
  bool waitForRequests(size_t count, std::chrono::milliseconds limit) const;
  // True once `count` exchanges are holding in holdUntilReleased(), false after `limit`.
  bool waitForHeld(int count, std::chrono::milliseconds limit) const;
  // Lets every held exchange, and every later one, answer.
  void releaseHeld();

 private:
  friend class HttpExchange;
  struct Listener;

  void accept();
  void serve(HttpExchange::Connection& connection);
  void record(const HttpRequest& request);

  Handler handler_;
  std::unique_ptr<Listener> listener_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_accepted_{0};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<HttpRequest> requests_;
  int held_ = 0;
  bool released_ = false;
  std::vector<std::unique_ptr<HttpExchange::Connection>> connections_;
  std::thread accept_thread_;
};

}  // namespace shardscaler::test_kit
