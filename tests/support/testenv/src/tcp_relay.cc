#include "shardscaler/testenv/tcp_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::testenv {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

int listenOn(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("relay: cannot open a socket");
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  auto addr = loopback(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    throw std::runtime_error("relay: cannot listen on 127.0.0.1:" + std::to_string(port));
  }
  return fd;
}

int boundPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("relay: getsockname failed on the listening socket");
  }
  return ntohs(addr.sin_port);
}

}  // namespace

TcpRelay::TcpRelay(int upstream_port) : upstream_port_(upstream_port), port_(pickFreePort()) {}

TcpRelay::TcpRelay(int upstream_port, int listening_fd)
    : upstream_port_(upstream_port), port_(boundPort(listening_fd)), listen_fd_(listening_fd) {}

int TcpRelay::listenOnFreePort() { return listenOn(0); }

TcpRelay::~TcpRelay() {
  down();
  if (listen_fd_ >= 0) ::close(listen_fd_);  // adopted and never served
  std::vector<std::thread> pumps;
  {
    std::lock_guard lock(mutex_);
    pumps.swap(pumps_);
  }
  for (auto& pump : pumps) pump.join();
}

void TcpRelay::up() {
  if (accepting_) return;
  if (listen_fd_ < 0) listen_fd_ = listenOn(port_);
  accepting_ = true;
  acceptor_ = std::thread([this] { acceptLoop(); });
}

void TcpRelay::down() {
  if (!accepting_) return;
  accepting_ = false;
  acceptor_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
  cutAll();
}

void TcpRelay::cutAll() {
  std::lock_guard lock(mutex_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
}

void TcpRelay::acceptLoop() {
  while (accepting_) {
    pollfd waiting{listen_fd_, POLLIN, 0};
    if (::poll(&waiting, 1, 50) <= 0) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (refusing_) {
      ::close(client);
      continue;
    }
    int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto addr = loopback(upstream_port_);
    if (upstream < 0 || ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(client);
      if (upstream >= 0) ::close(upstream);
      continue;
    }
    std::lock_guard lock(mutex_);
    open_fds_.push_back(client);
    open_fds_.push_back(upstream);
    pumps_.emplace_back([this, client, upstream] { pump(client, upstream); });
  }
}

// Copies bytes both ways until either side closes or the relay cuts the connection (shutdown
// makes both reads return 0).
void TcpRelay::pump(int client, int upstream) {
  char buffer[16384];
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  bool open = true;
  while (open) {
    if (::poll(fds, 2, 100) < 0) break;
    for (int i = 0; i < 2 && open; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        open = false;
        break;
      }
      if (i == 0 && delay_ms_ > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
      }
      for (ssize_t sent = 0; sent < n;) {
        auto w = ::send(fds[1 - i].fd, buffer + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
        if (w <= 0) {
          open = false;
          break;
        }
        sent += w;
      }
    }
  }
  std::lock_guard lock(mutex_);
  std::erase(open_fds_, client);
  std::erase(open_fds_, upstream);
  ::close(client);
  ::close(upstream);
}

}  // namespace shardscaler::testenv
