// A TLS client that can stop anywhere (no handshake, half a request, a body that never ends) and
// send bytes no HTTP library would (garbage request lines, chunk-extension floods), for tests of
// what a server does with slow, broken or hostile clients. 127.0.0.1 only; every operation ends
// within the timeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace shardscaler::test_kit {

class RawTlsClient {
 public:
  struct Options {
    std::string ca_pem;  // the only CA the server's certificate may chain to
    // OpenSSL protocol versions (TLS1_2_VERSION, ...); 0: the library's bounds.
    int min_version = 0;
    int max_version = 0;
    std::chrono::milliseconds timeout{5000};  // per operation
  };

  RawTlsClient(std::uint16_t port, const std::string& ca_pem);
  RawTlsClient(std::uint16_t port, Options options);
  ~RawTlsClient();
  RawTlsClient(const RawTlsClient&) = delete;
  RawTlsClient& operator=(const RawTlsClient&) = delete;

  bool connect();                  // TCP only
  bool handshake();                // TLS on top, verifying the server against the CA
  std::string tlsVersion() const;  // "TLSv1.3" after a handshake, else ""
  std::string lastError() const;   // of the last operation that failed
  bool send(const std::string& bytes);

  // One HTTP/1.x response: its status (0 when none arrived: closed, reset or timed out), the
  // status line and headers, and the body as long as Content-Length says.
  struct Response {
    int status = 0;
    std::string head;
    std::string body;
  };
  Response readResponse();
  // True when the server closes the connection (EOF or reset) within the timeout; what it sends
  // before is read and dropped.
  bool closedByServer();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace shardscaler::test_kit
