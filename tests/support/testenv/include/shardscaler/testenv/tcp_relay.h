// A TCP relay on 127.0.0.1 in front of a local server, for tests that fail the network between.
// It never looks into or changes the bytes it carries (TLS passes through and still verifies).
//
// The relay can be down (nothing listens on its port: a connection is refused, as by a server
// that is down), cut every connection it carries, accept and at once close new ones, and hold
// each chunk the client sends for a while (a slow server).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace shardscaler::testenv {

class TcpRelay {
 public:
  // Reserves a free port on 127.0.0.1 (kept across down() and up()); down until up().
  explicit TcpRelay(int upstream_port);
  // Takes over `listening_fd`, a socket already listening on 127.0.0.1 (from listenOnFreePort()),
  // which up() then serves instead of binding one. A socket belongs to the network namespace it
  // was opened in: one opened before the process entered a namespace of its own carries
  // connections from the host into that namespace. After down(), up() binds anew, here.
  TcpRelay(int upstream_port, int listening_fd);
  // A socket listening on a free port of 127.0.0.1, in the calling thread's network namespace.
  static int listenOnFreePort();
  ~TcpRelay();  // down(), then waits for every connection's thread
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  std::string httpsUrl() const { return "https://127.0.0.1:" + std::to_string(port_); }

  // Listens on port(); throws std::runtime_error when the port cannot be bound.
  void up();
  // Closes the listener and cuts every connection.
  void down();
  // Cuts every connection; the listener stays.
  void cutAll();
  // While on, each new connection is accepted and closed at once.
  void setRefusing(bool refusing) { refusing_ = refusing; }
  // Holds each chunk from a client this long before passing it on (0: no delay).
  void setDelay(std::chrono::milliseconds delay) { delay_ms_ = delay.count(); }

 private:
  void acceptLoop();
  void pump(int client, int upstream);

  int upstream_port_;
  int port_;
  int listen_fd_ = -1;  // while up, or adopted and not yet served
  std::atomic<bool> accepting_{false};
  std::atomic<bool> refusing_{false};
  std::atomic<long> delay_ms_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<int> open_fds_;
  std::vector<std::thread> pumps_;
};

}  // namespace shardscaler::testenv
