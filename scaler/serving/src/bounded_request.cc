#include "bounded_request.h"

#include <algorithm>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

namespace shardscaler::serving {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// Room beyond the header limit, so that the parser, not the buffer, notices a header too long.
constexpr std::size_t kHeaderSlack = 1024;

bool isHttpParseError(const boost::system::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

// The client went away, stopped, or the server is closing: nothing to answer.
bool isConnectionEnd(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec == beast::error::timeout || ec == asio::ssl::error::stream_truncated ||
         ec == asio::error::operation_aborted || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::bad_descriptor;
}

}  // namespace

BoundedRequest::BoundedRequest(const HttpServer::Limits& limits)
    : limits_(limits),
      buffer_(limits.max_header_bytes + kHeaderSlack),
      chunk_header_callback_([this](std::uint64_t /*size*/, beast::string_view extensions,
                                    boost::system::error_code& ec) {
        chunk_extension_bytes_ += extensions.size();
        if (chunk_extension_bytes_ > limits_.max_chunk_extension_bytes) {
          chunk_extensions_exceeded_ = true;
          ec = http::error::bad_chunk_extension;
        }
      }) {}

void BoundedRequest::startHeader() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
  // Checked against a Content-Length as soon as the header is complete; the route's own limit
  // comes after routing.
  parser_->body_limit(limits_.max_body_bytes);
  parser_->on_chunk_header(chunk_header_callback_);
  buffer_.max_size(std::max(buffer_.size(), limits_.max_header_bytes + kHeaderSlack));
  chunk_extension_bytes_ = 0;
  chunk_extensions_exceeded_ = false;
  header_field_bytes_ = 0;
  body_bytes_to_reserve_ = 0;
}

std::optional<Refusal> BoundedRequest::startBody(std::size_t limit) {
  const auto length = parser_->content_length();
  if (length && *length > limit) {
    return Refusal{413, "request body larger than " + std::to_string(limit) + " bytes\n"};
  }
  parser_->body_limit(limit);
  body_bytes_to_reserve_ = length ? static_cast<std::size_t>(*length)
                                  : (parser_->chunked() ? 2 * limit : std::size_t{0});
  header_field_bytes_ = fieldBytes();
  // From here the buffer carries body bytes through and holds at most one chunk-size line or
  // the trailer: an endless chunk extension ends at this bound.
  buffer_.max_size(std::max(buffer_.size(), limits_.max_chunk_line_bytes));
  return std::nullopt;
}

std::optional<Refusal> BoundedRequest::finishBody() const {
  const std::size_t fields = fieldBytes();
  if (fields > header_field_bytes_ && fields - header_field_bytes_ > limits_.max_trailer_bytes) {
    return Refusal{431, "trailer fields larger than " + std::to_string(limits_.max_trailer_bytes) +
                            " bytes\n"};
  }
  return std::nullopt;
}

std::optional<Refusal> BoundedRequest::refusalFor(const boost::system::error_code& ec) const {
  if (!ec || isConnectionEnd(ec)) return std::nullopt;
  if (ec == http::error::header_limit) return Refusal{431, "request header too large\n"};
  if (ec == http::error::body_limit) return Refusal{413, "request body too large\n"};
  if (ec == http::error::bad_chunk_extension && chunk_extensions_exceeded_) {
    return Refusal{400, "chunk extensions larger than " +
                            std::to_string(limits_.max_chunk_extension_bytes) + " bytes\n"};
  }
  // Beast refuses every version but 1.0 and 1.1 this way, HTTP/2.0 (and h2's preface) included.
  if (ec == http::error::bad_version) {
    return Refusal{505, "only HTTP/1.0 and HTTP/1.1 are served\n"};
  }
  if (ec == http::error::buffer_overflow) {
    return Refusal{400, "chunk-size line or trailer longer than " +
                            std::to_string(limits_.max_chunk_line_bytes) + " bytes\n"};
  }
  // Beast's own description of what is malformed; nothing the client sent is repeated.
  if (isHttpParseError(ec)) return Refusal{400, "bad request: " + ec.message() + "\n"};
  return std::nullopt;
}

bool BoundedRequest::expectsContinue() const {
  const auto& request = parser_->get();
  return request.version() == 11 &&
         beast::iequals(request[http::field::expect], beast::string_view("100-continue"));
}

std::size_t BoundedRequest::fieldBytes() const {
  std::size_t bytes = 0;
  for (const auto& field : parser_->get()) {
    bytes += field.name_string().size() + field.value().size() + 4;  // ": " and CRLF
  }
  return bytes;
}

}  // namespace shardscaler::serving
