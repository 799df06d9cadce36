#include "rest_fake_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <stdexcept>

#include <boost/beast/http/status.hpp>
#include <nlohmann/json.hpp>

namespace shardscaler::k8s::testing {
namespace {

constexpr auto kPollStep = std::chrono::milliseconds(50);

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string percentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// Beast's reason phrase for `status` ("<unknown-status>" for a code HTTP does not define).
std::string reasonPhrase(int status) {
  const auto reason =
      boost::beast::http::obsolete_reason(boost::beast::http::int_to_status(status));
  return std::string(reason.data(), reason.size());
}

bool parseRequest(std::string_view head, FakeRequest& request) {
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) return false;
  request.method = std::string(line.substr(0, sp1));
  request.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  if (question != std::string::npos) {
    std::string_view query = std::string_view(request.target).substr(question + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      size_t eq = pair.find('=');
      request.query[percentDecode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : percentDecode(pair.substr(eq + 1));
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
  }
  size_t pos = line_end + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view header = head.substr(pos, end - pos);
    size_t colon = header.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = header.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      request.headers[lower(std::string(header.substr(0, colon)))] = std::string(value);
    }
    pos = end + 2;
  }
  return true;
}

}  // namespace

std::string FakeRequest::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

bool FakeExchange::writeRaw(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool FakeExchange::respond(int status, std::string_view body,
                           const std::vector<std::string>& extra_headers,
                           std::string_view content_type) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) + "\r\n";
  if (!content_type.empty()) head += "Content-Type: " + std::string(content_type) + "\r\n";
  head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& header : extra_headers) head += header + "\r\n";
  if (close_after_) head += "Connection: close\r\n";
  head += "\r\n";
  head += body;
  return writeRaw(head);
}

bool FakeExchange::startChunked(int status, const std::vector<std::string>& extra_headers) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) + "\r\n";
  head += "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n";
  for (const auto& header : extra_headers) head += header + "\r\n";
  head += "\r\n";
  return writeRaw(head);
}

bool FakeExchange::chunk(std::string_view bytes) {
  if (bytes.empty()) return true;  // an empty chunk would end the body
  char size[32];
  int n = std::snprintf(size, sizeof(size), "%zx\r\n", bytes.size());
  std::string framed(size, static_cast<size_t>(n));
  framed.append(bytes);
  framed.append("\r\n");
  return writeRaw(framed);
}

bool FakeExchange::endChunked() { return writeRaw("0\r\n\r\n"); }

bool FakeExchange::holdUntilClientCloses(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stopping_.load()) return true;
    pollfd pfd{fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(kPollStep.count()));
    if (ready > 0) {
      char buffer[4096];
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        close_after_ = true;
        return true;
      }
    }
  }
  return false;
}

FakeApiServer::FakeApiServer(FakeHandler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket() failed");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("bind/listen on 127.0.0.1:0 failed");
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { acceptLoop(); });
}

FakeApiServer::~FakeApiServer() {
  stopping_.store(true);
  acceptor_.join();
  {
    std::lock_guard lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& thread : threads_) thread.join();
  ::close(listen_fd_);
}

std::vector<FakeRequest> FakeApiServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool FakeApiServer::waitForRequests(size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(mutex_);
  return request_arrived_.wait_for(lock, limit, [&] { return requests_.size() >= count; });
}

void FakeApiServer::acceptLoop() {
  while (!stopping_.load()) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(kPollStep.count())) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int connection = ++connections_;
    std::lock_guard lock(mutex_);
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd, connection] { serve(fd, connection); });
  }
}

void FakeApiServer::serve(int fd, int connection) {
  std::string buffer;
  bool open = true;
  while (open && !stopping_.load()) {
    size_t head_end = buffer.find("\r\n\r\n");
    if (head_end == std::string::npos) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(kPollStep.count())) <= 0) continue;
      char chunk[8192];
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      continue;
    }
    FakeRequest request;
    request.connection = connection;
    if (!parseRequest(std::string_view(buffer).substr(0, head_end), request)) break;
    size_t length = 0;
    if (auto cl = request.header("content-length"); !cl.empty()) length = std::stoul(cl);
    while (buffer.size() < head_end + 4 + length && !stopping_.load()) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(kPollStep.count())) <= 0) continue;
      char chunk[8192];
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      buffer.append(chunk, static_cast<size_t>(n));
    }
    if (!open || buffer.size() < head_end + 4 + length) break;
    request.body = buffer.substr(head_end + 4, length);
    buffer.erase(0, head_end + 4 + length);
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    request_arrived_.notify_all();
    FakeExchange exchange(fd, stopping_);
    handler_(request, exchange);
    if (exchange.closing()) open = false;
  }
  ::shutdown(fd, SHUT_RDWR);
  std::lock_guard lock(mutex_);
  // The fd is closed only here, by its own thread, so shutdown() in the destructor never
  // races with a reused descriptor number.
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

std::string statusJson(int code, const std::string& reason, const std::string& message) {
  nlohmann::json status = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}};
  return status.dump();
}

}  // namespace shardscaler::k8s::testing
