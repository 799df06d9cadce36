#include "shardscaler/serving/bind_address.h"

namespace shardscaler::serving {

std::string BindAddress::toString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace shardscaler::serving
