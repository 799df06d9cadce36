#include "free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace shardscaler::testenv::control_plane_detail {

std::vector<int> pickFreePorts(int count) {
  // All sockets stay open until every port is read, so the kernel hands out distinct ports.
  std::vector<int> sockets;
  std::vector<int> ports;
  auto close_all = [&] {
    for (int fd : sockets) close(fd);
  };
  for (int i = 0; i < count; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      close_all();
      throw std::system_error(errno, std::generic_category(), "socket");
    }
    sockets.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      int saved = errno;
      close_all();
      throw std::system_error(saved, std::generic_category(), "bind 127.0.0.1:0");
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  close_all();
  return ports;
}

}  // namespace shardscaler::testenv::control_plane_detail
