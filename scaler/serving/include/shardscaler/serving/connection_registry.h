// The open connections of one listener, at most a fixed number. A new connection takes the place
// of the oldest one that is idle between requests or has not finished its TLS handshake; only when
// every connection is in the middle of a request is it refused. So idle sockets, however many a
// client opens, never lock out the API server. Must be used from the listener's I/O thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace shardscaler::serving {

enum class ConnectionPhase {
  Handshake,  // accepted, TLS handshake not done (plain HTTP connections skip it)
  Idle,       // waiting for the first byte of a request
  Active,     // reading a request, running its handler or writing its answer
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual ConnectionPhase phase() const = 0;
  // Closes the connection now (it was idle or handshaking): its place goes to a new one.
  virtual void evict() = 0;
  // The server stops: close when idle, else after the answer being written.
  virtual void shutdown() = 0;
};

class ConnectionRegistry {
 public:
  explicit ConnectionRegistry(std::size_t max_connections) : max_(max_connections) {}

  enum class Admission {
    Admitted,  // there was room
    Evicted,   // an idle or handshaking connection was closed to make room
    Refused,   // every connection is busy with a request: close the new one
  };
  // Makes room for one more connection. Does not add it: add() once it exists.
  Admission makeRoom();
  void add(std::weak_ptr<Connection> connection);
  // Open connections (closed ones are forgotten on the next makeRoom()).
  std::size_t size();
  // Tells every open connection that the server stops.
  void shutdownAll();

 private:
  void forgetClosed();

  std::size_t max_;
  std::vector<std::weak_ptr<Connection>> connections_;  // oldest first
};

}  // namespace shardscaler::serving
