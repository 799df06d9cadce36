// Listening TCP sockets for the service's servers, from "host:port" as Go programs write it.
// Must never listen on anything wider than the address names (":port" means every interface).
#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/serving/bind_address.h"

namespace shardscaler::serving {

// An acceptor bound to `address` and listening, with SO_REUSEADDR (a restarted process can bind
// again at once). `host` may be an IP literal or a name to resolve; every resolved address is
// tried in order. The error names the address and the cause.
Expected<boost::asio::ip::tcp::acceptor> openAcceptor(boost::asio::io_context& ioc,
                                                      const BindAddress& address);

}  // namespace shardscaler::serving
