// A minimal HTTP/1.1 server on 127.0.0.1 (port 0) for hermetic client tests: keep-alive,
// Content-Length bodies, a handler per request, counts of accepted connections.
// It never talks to anything but loopback and never sleeps: held responses wait on a condition.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace shardscaler::promql::testhttp {

struct HttpRequest {
  std::string method{};
  std::string path{};                            // without the query string
  std::map<std::string, std::string> headers{};  // names lower-cased
  std::string body{};
  // Form parameters, decoded, from the query string and (for a form POST) the body.
  std::map<std::string, std::string> params{};

  std::string header(const std::string& lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string body{};
  std::string content_type = "application/json";
  bool close_connection = false;
  // Do not answer until releaseHeld() or the server stops (for client-timeout tests).
  bool hold = false;
};

class TestHttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  explicit TestHttpServer(Handler handler);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  int acceptedConnections() const { return accepted_.load(); }
  std::vector<HttpRequest> requests() const;
  HttpRequest lastRequest() const;
  // Blocks until `n` requests are being held, or the deadline passes; returns whether they are.
  bool waitForHeld(int n, std::chrono::milliseconds deadline);
  void releaseHeld();

 private:
  void acceptLoop();
  void serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<HttpRequest> requests_;
  std::vector<int> connection_fds_;
  std::vector<std::thread> connection_threads_;
  int held_ = 0;
  bool released_ = false;
  std::thread accept_thread_;
};

// {"status":"success","data":{"resultType":<type>,"result":<result>}} with optional warnings.
std::string successBody(const std::string& result_type, const std::string& result,
                        const std::string& warnings_json = "");
// {"status":"error","errorType":...,"error":...}
std::string errorBody(const std::string& error_type, const std::string& error,
                      const std::string& warnings_json = "");

}  // namespace shardscaler::promql::testhttp
