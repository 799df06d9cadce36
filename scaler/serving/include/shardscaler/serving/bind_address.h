// A listener address as Go programs write it ("host:port"), shared by every server of the service.
// Must never stand for anything wider than it names: only host "" means every interface.
#pragma once

#include <cstdint>
#include <string>

namespace shardscaler::serving {

struct BindAddress {
  std::string host;        // "" = every interface (IPv6 and IPv4 on one socket where possible)
  std::uint16_t port = 0;  // 0 = a free port the kernel picks

  std::string toString() const {  // ":9443", "127.0.0.1:0", "[::1]:9443"
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
  friend bool operator==(const BindAddress&, const BindAddress&) = default;
};

}  // namespace shardscaler::serving
