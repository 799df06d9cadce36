#include "shardscaler/serving/tcp_listener.h"

#include <vector>

#include <boost/asio/ip/v6_only.hpp>

#include "shardscaler/base/expected.h"

namespace shardscaler::serving {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Where to try binding, best first.
Expected<std::vector<tcp::endpoint>> candidates(asio::io_context& ioc, const BindAddress& address) {
  if (address.host.empty()) {
    return std::vector<tcp::endpoint>{tcp::endpoint(asio::ip::address_v6::any(), address.port),
                                      tcp::endpoint(asio::ip::address_v4::any(), address.port)};
  }
  boost::system::error_code ec;
  const auto literal = asio::ip::make_address(address.host, ec);
  if (!ec) return std::vector<tcp::endpoint>{tcp::endpoint(literal, address.port)};
  tcp::resolver resolver(ioc);
  const auto results =
      resolver.resolve(address.host, std::to_string(address.port), tcp::resolver::passive, ec);
  if (ec) return std::unexpected(ec.message());
  std::vector<tcp::endpoint> endpoints;
  for (const auto& result : results) endpoints.push_back(result.endpoint());
  return endpoints;
}

}  // namespace

Expected<tcp::acceptor> openAcceptor(asio::io_context& ioc, const BindAddress& address) {
  auto endpoints = candidates(ioc, address);
  if (!endpoints) return std::unexpected("listen " + address.toString() + ": " + endpoints.error());
  std::string last_error = "no address to bind";
  for (const auto& endpoint : *endpoints) {
    tcp::acceptor acceptor(ioc);
    boost::system::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    // Dual stack only for the wildcard; a named v6 address means exactly that address.
    if (!ec && address.host.empty() && endpoint.address().is_v6()) {
      acceptor.set_option(asio::ip::v6_only(false), ec);
    }
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) return acceptor;
    last_error = ec.message();
  }
  return std::unexpected("listen " + address.toString() + ": " + last_error);
}

}  // namespace shardscaler::serving
