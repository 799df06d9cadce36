// One HTTP/1.x request read within fixed bounds, for both of shardscaler's servers: the header
// first, the body only once the route has set its own limit. Must never let a client grow memory
// beyond the limits, whatever it sends (Beast 1.74 counts neither chunk extensions nor trailers).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include "shardscaler/serving/http_server.h"

namespace shardscaler::serving {

// Why a request does not reach a handler: the status and a one-line text body. The body names
// the limit, never what the client sent.
struct Refusal {
  int status = 400;
  std::string body;
};

class BoundedRequest {
 public:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  explicit BoundedRequest(const HttpServer::Limits& limits);
  // The parser refers to a callback of this object: it stays where it was made.
  BoundedRequest(const BoundedRequest&) = delete;
  BoundedRequest& operator=(const BoundedRequest&) = delete;

  // A fresh parser for the next request, with the header limit; the buffer keeps what the client
  // sent beyond the previous request (pipelining).
  void startHeader();
  // Once routed: the route's body limit (the router holds it to Limits::max_body_bytes). A
  // declared Content-Length beyond it is refused here, before a byte of the body is read.
  std::optional<Refusal> startBody(std::size_t limit);
  // After the body was read: trailers beyond their limit are refused.
  std::optional<Refusal> finishBody() const;
  // The answer to a failed read, or nullopt when the connection just ended (closed, timed out,
  // cut): nothing to answer then.
  std::optional<Refusal> refusalFor(const boost::system::error_code& ec) const;

  // The client sent "Expect: 100-continue" over HTTP/1.1 and waits for a 100 before the body.
  bool expectsContinue() const;
  // Bytes the body may still take in memory: its Content-Length, or for a chunked body twice the
  // route's limit, as its string grows by doubling (0 before startBody).
  std::size_t bodyBytesToReserve() const { return body_bytes_to_reserve_; }
  // Shrinks the buffer when it holds nothing, so that an idle connection keeps no capacity.
  void releaseIdleBuffer() {
    if (buffer_.size() == 0) buffer_.shrink_to_fit();
  }

  Parser& parser() { return *parser_; }
  boost::beast::flat_buffer& buffer() { return buffer_; }

 private:
  std::size_t fieldBytes() const;

  HttpServer::Limits limits_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  std::function<void(std::uint64_t, boost::beast::string_view, boost::system::error_code&)>
      chunk_header_callback_;
  std::size_t chunk_extension_bytes_ = 0;
  bool chunk_extensions_exceeded_ = false;
  std::size_t header_field_bytes_ = 0;  // at startBody, to tell trailers apart
  std::size_t body_bytes_to_reserve_ = 0;
};

}  // namespace shardscaler::serving
