// Ports on 127.0.0.1 for test servers, and for tests that need a server to be down.
// Never binds anything but 127.0.0.1, and never holds a port beyond what a call says.
#pragma once

#include <string>
#include <vector>

namespace shardscaler::testenv {

// `count` distinct ports the kernel considered free (bind to port 0, read, close). Never reserves
// anything: a port can be taken between the pick and a server's bind, so a caller that binds
// must detect "address already in use" and pick again.
std::vector<int> pickFreePorts(int count);
int pickFreePort();

// A port on 127.0.0.1 that is bound but never listened on, for as long as this object lives: a
// connection to it is refused (a server that is down), and no other process can take the port
// meanwhile, as one could take a port that was picked and closed.
class RefusingPort {
 public:
  RefusingPort();  // throws std::system_error when no port can be bound
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;

  int port() const { return port_; }
  int fd() const { return fd_; }
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }

 private:
  int fd_;
  int port_;
};

}  // namespace shardscaler::testenv
