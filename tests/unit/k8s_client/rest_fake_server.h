// A tiny HTTP/1.1 server on 127.0.0.1 (port 0) for RestClient's unit tests: each request goes
// to a handler that writes the answer byte by byte as it likes. Never a real API server.
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
#include <vector>

namespace shardscaler::k8s::testing {

struct FakeRequest {
  std::string method;
  std::string target;                          // path and query, as sent
  std::string path;                            // without the query
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  int connection = 0;  // 1 for the first accepted connection, 2 for the next ...

  std::string header(const std::string& name) const;
};

// The handler's side of one connection.
class FakeExchange {
 public:
  explicit FakeExchange(int fd, const std::atomic<bool>& stopping) : fd_(fd), stopping_(stopping) {}

  bool writeRaw(std::string_view bytes);
  // A complete response with Content-Length; extra_headers are "Name: value" lines.
  bool respond(int status, std::string_view body,
               const std::vector<std::string>& extra_headers = {},
               std::string_view content_type = "application/json");
  bool respondJson(int status, const std::string& json) { return respond(status, json); }
  // A chunked response, written piece by piece.
  bool startChunked(int status, const std::vector<std::string>& extra_headers = {});
  bool chunk(std::string_view bytes);
  bool endChunked();
  // Keeps the connection open, sending nothing, until the client closes it or the server
  // stops; false if neither happens within `limit`.
  bool holdUntilClientCloses(std::chrono::milliseconds limit);
  // Close the connection after this exchange instead of keeping it alive.
  void closeAfter() { close_after_ = true; }
  bool closing() const { return close_after_; }

 private:
  int fd_;
  const std::atomic<bool>& stopping_;
  bool close_after_ = false;
};

using FakeHandler = std::function<void(const FakeRequest&, FakeExchange&)>;

class FakeApiServer {
 public:
  explicit FakeApiServer(FakeHandler handler);
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connectionsAccepted() const { return connections_.load(); }
  std::vector<FakeRequest> requests() const;
  // True once `count` requests have arrived, false after `limit`.
  bool waitForRequests(size_t count, std::chrono::milliseconds limit) const;

 private:
  void acceptLoop();
  void serve(int fd, int connection);

  FakeHandler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  mutable std::condition_variable request_arrived_;
  std::vector<FakeRequest> requests_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// A metav1.Status body.
std::string statusJson(int code, const std::string& reason, const std::string& message);

}  // namespace shardscaler::k8s::testing
