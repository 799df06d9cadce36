#include "test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <boost/beast/http/status.hpp>

namespace shardscaler::promql::testhttp {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string urlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void parseForm(const std::string& form, std::map<std::string, std::string>& params) {
  size_t start = 0;
  while (start < form.size()) {
    size_t end = form.find('&', start);
    if (end == std::string::npos) end = form.size();
    const std::string pair = form.substr(start, end - start);
    const size_t eq = pair.find('=');
    if (eq != std::string::npos)
      params[urlDecode(pair.substr(0, eq))] = urlDecode(pair.substr(eq + 1));
    start = end + 1;
  }
}

bool sendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Beast's reason phrase for `status` ("<unknown-status>" for a code HTTP does not define).
std::string reasonPhrase(int status) {
  const auto reason =
      boost::beast::http::obsolete_reason(boost::beast::http::int_to_status(status));
  return std::string(reason.data(), reason.size());
}

}  // namespace

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

TestHttpServer::TestHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("cannot listen on 127.0.0.1:0");
  }
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { acceptLoop(); });
}

TestHttpServer::~TestHttpServer() {
  stopping_ = true;
  releaseHeld();
  // shutdown() wakes threads blocked in accept() and recv().
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (int fd : connection_fds_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(connection_threads_);
  }
  for (auto& t : threads) t.join();
}

void TestHttpServer::acceptLoop() {
  while (!stopping_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    accepted_.fetch_add(1);
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    connection_fds_.push_back(fd);
    connection_threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void TestHttpServer::serve(int fd) {
  std::string buffer;
  char chunk[65536];
  auto readMore = [&]() {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  };
  bool open = true;
  while (open && !stopping_) {
    size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!readMore()) {
        open = false;
        break;
      }
    }
    if (!open) break;
    HttpRequest request;
    const std::string head = buffer.substr(0, header_end);
    size_t line_end = head.find("\r\n");
    const std::string request_line = head.substr(0, line_end);
    const size_t sp1 = request_line.find(' ');
    const size_t sp2 = request_line.find(' ', sp1 + 1);
    request.method = request_line.substr(0, sp1);
    const std::string target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    const size_t qmark = target.find('?');
    request.path = target.substr(0, qmark);
    if (qmark != std::string::npos) parseForm(target.substr(qmark + 1), request.params);
    while (line_end != std::string::npos && line_end < head.size()) {
      const size_t next = head.find("\r\n", line_end + 2);
      const std::string line = head.substr(line_end + 2, next - line_end - 2);
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t value_start = colon + 1;
        while (value_start < line.size() && line[value_start] == ' ') ++value_start;
        request.headers[lower(line.substr(0, colon))] = line.substr(value_start);
      }
      line_end = next;
    }
    const size_t content_length =
        request.headers.count("content-length") ? std::stoul(request.headers["content-length"]) : 0;
    buffer.erase(0, header_end + 4);
    while (buffer.size() < content_length) {
      if (!readMore()) {
        open = false;
        break;
      }
    }
    if (!open) break;
    request.body = buffer.substr(0, content_length);
    buffer.erase(0, content_length);
    if (request.header("content-type") == "application/x-www-form-urlencoded") {
      parseForm(request.body, request.params);
    }
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    HttpResponse response = handler_(request);
    if (response.hold) {
      std::unique_lock lock(mutex_);
      ++held_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      --held_;
    }
    std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                      reasonPhrase(response.status) + "\r\nContent-Type: " + response.content_type +
                      "\r\nContent-Length: " + std::to_string(response.body.size()) + "\r\n";
    if (response.close_connection) out += "Connection: close\r\n";
    out += "\r\n";
    out += response.body;
    if (!sendAll(fd, out) || response.close_connection) open = false;
  }
  std::lock_guard lock(mutex_);
  ::close(fd);
  connection_fds_.erase(std::find(connection_fds_.begin(), connection_fds_.end(), fd));
}

std::vector<HttpRequest> TestHttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

HttpRequest TestHttpServer::lastRequest() const {
  std::lock_guard lock(mutex_);
  return requests_.empty() ? HttpRequest{} : requests_.back();
}

bool TestHttpServer::waitForHeld(int n, std::chrono::milliseconds deadline) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, deadline, [&] { return held_ >= n; });
}

void TestHttpServer::releaseHeld() {
  std::lock_guard lock(mutex_);
  released_ = true;
  cv_.notify_all();
}

std::string successBody(const std::string& result_type, const std::string& result,
                        const std::string& warnings_json) {
  std::string body = R"({"status":"success","data":{"resultType":")" + result_type +
                     R"(","result":)" + result + "}";
  if (!warnings_json.empty()) body += R"(,"warnings":)" + warnings_json;
  return body + "}";
}

std::string errorBody(const std::string& error_type, const std::string& error,
                      const std::string& warnings_json) {
  std::string body =
      R"({"status":"error","errorType":")" + error_type + R"(","error":")" + error + "\"";
  if (!warnings_json.empty()) body += R"(,"warnings":)" + warnings_json;
  return body + "}";
}

}  // namespace shardscaler::promql::testhttp
