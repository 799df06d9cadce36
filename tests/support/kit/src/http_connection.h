// One accepted connection of the test HTTP server: its own io_context, run only by the
// connection's thread, so every socket operation happens on that thread and a stop is a post().
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::test_kit {

struct HttpExchange::Connection {
  boost::asio::io_context io;
  std::optional<boost::beast::tcp_stream> stream;  // set once accepted
  boost::beast::flat_buffer buffer;                // bytes read past the current request
  int number = 0;
  std::thread thread;

  // Starts one operation with a completion handler and runs this connection's io_context until
  // it completes. The stream's timer (expires_after) bounds the operation; a close posted by
  // the stopping server aborts it.
  template <typename Start>
  boost::beast::error_code await(Start&& start) {
    std::optional<boost::beast::error_code> result;
    std::forward<Start>(start)(
        [&result](boost::beast::error_code ec, std::size_t /*bytes*/) { result = ec; });
    io.restart();
    while (!result && io.run_one() > 0) {
    }
    return result.value_or(boost::asio::error::operation_aborted);
  }

  // Closes the socket; pending operations complete with operation_aborted.
  void close() {
    boost::beast::error_code ignored;
    stream->socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    stream->close();
  }
};

}  // namespace shardscaler::test_kit
