#include "shardscaler/test_kit/test_http_server.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include "http_connection.h"

namespace shardscaler::test_kit {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::uint64_t kBodyLimit = 64ULL * 1024 * 1024;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding ('+' is a space), as Go's url.ParseQuery reads a
// query or a form; Boost 1.74 has no Boost.URL to do it. A stray '%' stays as it is.
std::string formDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() && hexDigit(text[i + 1]) >= 0 &&
               hexDigit(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hexDigit(text[i + 1]) * 16 + hexDigit(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// Fields later in `form` overwrite earlier ones and those already in `fields`.
void parseForm(std::string_view form, std::map<std::string, std::string>& fields) {
  while (!form.empty()) {
    const size_t amp = form.find('&');
    const std::string_view pair = form.substr(0, amp);
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      fields[formDecode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : formDecode(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    form.remove_prefix(amp + 1);
  }
}

HttpRequest toRequest(const http::request<http::string_body>& message, int connection) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  const size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  if (question != std::string::npos) {
    parseForm(std::string_view(request.target).substr(question + 1), request.query);
  }
  for (const auto& field : message) {
    request.headers[lower(std::string(field.name_string()))] = std::string(field.value());
  }
  request.body = message.body();
  request.params = request.query;
  if (request.header("content-type").starts_with("application/x-www-form-urlencoded")) {
    parseForm(request.body, request.params);
  }
  request.connection = connection;
  return request;
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

struct HttpServer::Listener {
  asio::io_context io;
  tcp::acceptor acceptor{io};
};

HttpServer::HttpServer(Handler handler)
    : handler_(std::move(handler)), listener_(std::make_unique<Listener>()) {
  const tcp::endpoint loopback(asio::ip::address_v4::loopback(), 0);
  listener_->acceptor.open(loopback.protocol());
  listener_->acceptor.bind(loopback);
  listener_->acceptor.listen();
  port_ = listener_->acceptor.local_endpoint().port();
  accept();
  accept_thread_ = std::thread([this] { listener_->io.run(); });
}

HttpServer::HttpServer(Responder responder)
    : HttpServer(Handler(
          [responder = std::move(responder)](const HttpRequest& request, HttpExchange& exchange) {
            exchange.respond(responder(request));
          })) {}

HttpServer::~HttpServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
  }
  changed_.notify_all();  // ends every holdUntilReleased()
  asio::post(listener_->io, [this] {
    beast::error_code ignored;
    listener_->acceptor.close(ignored);
  });
  accept_thread_.join();
  // No connection is added any more; each is closed on its own thread.
  for (auto& connection : connections_) {
    asio::post(connection->io, [&c = *connection] { c.close(); });
  }
  for (auto& connection : connections_) connection->thread.join();
}

void HttpServer::accept() {
  auto connection = std::make_unique<HttpExchange::Connection>();
  auto& io = connection->io;
  listener_->acceptor.async_accept(io, [this, connection = std::move(connection)](
                                           beast::error_code ec, tcp::socket socket) mutable {
    if (ec) return;  // the acceptor was closed: the server is stopping
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    connection->number = ++connections_accepted_;
    connection->stream.emplace(std::move(socket));
    auto& accepted = *connection;
    {
      std::lock_guard lock(mutex_);
      connections_.push_back(std::move(connection));
    }
    accepted.thread = std::thread([this, &accepted] { serve(accepted); });
    accept();
  });
}

void HttpServer::serve(HttpExchange::Connection& connection) {
  while (!stopping_.load()) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    connection.stream->expires_never();  // until the client sends, leaves, or the server stops
    const auto ec = connection.await([&](auto done) {
      http::async_read(*connection.stream, connection.buffer, parser, std::move(done));
    });
    if (ec) break;
    const HttpRequest request = toRequest(parser.get(), connection.number);
    record(request);
    HttpExchange exchange(*this, connection);
    if (!parser.get().keep_alive()) exchange.closeAfter();
    handler_(request, exchange);
    if (exchange.close_after_ || !exchange.finished_) break;
  }
  connection.close();
}

void HttpServer::record(const HttpRequest& request) {
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
  }
  changed_.notify_all();
}

std::vector<HttpRequest> HttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

HttpRequest HttpServer::lastRequest() const {
  std::lock_guard lock(mutex_);
  return requests_.empty() ? HttpRequest{} : requests_.back();
}

bool HttpServer::waitForRequests(size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, limit, [&] { return requests_.size() >= count; });
}

bool HttpServer::waitForHeld(int count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, limit, [&] { return held_ >= count; });
}

void HttpServer::releaseHeld() {
  {
    std::lock_guard lock(mutex_);
    released_ = true;
  }
  changed_.notify_all();
}

}  // namespace shardscaler::test_kit
