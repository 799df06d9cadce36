#include "shardscaler/testenv/loopback_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace shardscaler::testenv {
namespace {

// A socket bound to 127.0.0.1 on a port the kernel picks; its port in `port`.
int bindAnyLoopbackPort(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int saved = errno;
    ::close(fd);
    throw std::system_error(saved, std::generic_category(), "bind 127.0.0.1:0");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

std::vector<int> pickFreePorts(int count) {
  // All sockets stay open until every port is read, so the kernel hands out distinct ports.
  std::vector<int> sockets;
  std::vector<int> ports;
  try {
    for (int i = 0; i < count; ++i) {
      int port = 0;
      sockets.push_back(bindAnyLoopbackPort(port));
      ports.push_back(port);
    }
  } catch (...) {
    for (int fd : sockets) ::close(fd);
    throw;
  }
  for (int fd : sockets) ::close(fd);
  return ports;
}

int pickFreePort() { return pickFreePorts(1).front(); }

RefusingPort::RefusingPort() : port_(0) { fd_ = bindAnyLoopbackPort(port_); }

RefusingPort::~RefusingPort() { ::close(fd_); }

}  // namespace shardscaler::testenv
