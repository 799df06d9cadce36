#include <array>
#include <mutex>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "http_connection.h"
#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::test_kit {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

template <typename Body>
void setHead(http::response<Body>& response, int status, const HttpHeaders& headers,
             std::string_view content_type, bool keep_alive) {
  response.version(11);
  response.result(static_cast<unsigned>(status));  // Beast's reason phrase, as a server's
  if (!content_type.empty()) {
    response.set(http::field::content_type,
                 beast::string_view(content_type.data(), content_type.size()));
  }
  for (const auto& [name, value] : headers) response.insert(name, value);
  response.keep_alive(keep_alive);
}

}  // namespace

bool HttpExchange::respond(const HttpResponse& response) {
  if (response.hold) holdUntilReleased(kHttpHoldLimit);
  if (response.close_connection) closeAfter();
  return respond(response.status, response.body, response.headers, response.content_type);
}

bool HttpExchange::respond(int status, std::string_view body, const HttpHeaders& headers,
                           std::string_view content_type) {
  http::response<http::string_body> response;
  setHead(response, status, headers, content_type, !close_after_);
  response.body() = std::string(body);
  response.prepare_payload();
  conn_.stream->expires_after(kHttpWriteLimit);
  const auto ec =
      conn_.await([&](auto done) { http::async_write(*conn_.stream, response, std::move(done)); });
  finished_ = !ec;
  return !ec;
}

bool HttpExchange::startChunked(int status, const HttpHeaders& headers,
                                std::string_view content_type) {
  http::response<http::empty_body> response;
  setHead(response, status, headers, content_type, !close_after_);
  response.chunked(true);
  http::response_serializer<http::empty_body> serializer(response);
  conn_.stream->expires_after(kHttpWriteLimit);
  return !conn_.await(
      [&](auto done) { http::async_write_header(*conn_.stream, serializer, std::move(done)); });
}

bool HttpExchange::chunk(std::string_view bytes) {
  if (bytes.empty()) return true;
  conn_.stream->expires_after(kHttpWriteLimit);
  return !conn_.await([&](auto done) {
    asio::async_write(*conn_.stream, http::make_chunk(asio::buffer(bytes.data(), bytes.size())),
                      std::move(done));
  });
}

bool HttpExchange::endChunked() {
  conn_.stream->expires_after(kHttpWriteLimit);
  const auto ec = conn_.await([&](auto done) {
    asio::async_write(*conn_.stream, http::make_chunk_last(), std::move(done));
  });
  finished_ = !ec;
  return !ec;
}

bool HttpExchange::holdUntilClientCloses(std::chrono::milliseconds limit) {
  if (server_.stopping_.load()) return true;
  conn_.stream->expires_after(limit);
  std::array<char, 4096> dropped{};
  for (;;) {
    const auto ec = conn_.await(
        [&](auto done) { conn_.stream->async_read_some(asio::buffer(dropped), std::move(done)); });
    if (ec) {
      close_after_ = true;
      // A timeout is Beast's, which has closed the stream too.
      return ec != beast::error::timeout;
    }
  }
}

bool HttpExchange::holdUntilReleased(std::chrono::milliseconds limit) {
  std::unique_lock lock(server_.mutex_);
  ++server_.held_;
  server_.changed_.notify_all();
  const bool released = server_.changed_.wait_for(
      lock, limit, [this] { return server_.released_ || server_.stopping_.load(); });
  --server_.held_;
  return released;
}

}  // namespace shardscaler::test_kit
