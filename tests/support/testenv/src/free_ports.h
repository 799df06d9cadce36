// Free TCP ports on 127.0.0.1 for the test servers.
// Never reserves anything: a port can be taken between the pick and the server's bind, so
// callers must detect "address already in use" and pick again.
#pragma once

#include <vector>

namespace shardscaler::testenv::control_plane_detail {

// `count` distinct ports the kernel considered free (bind to port 0, read, close).
std::vector<int> pickFreePorts(int count);

}  // namespace shardscaler::testenv::control_plane_detail
