// One HTTPS request and its answer as handlers see them, independent of Beast and OpenSSL types.
// Must never carry a client certificate that was not verified as if it were.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscaler/certificates/x509.h"

namespace shardscaler::serving {

// The client certificate of the connection a request came on.
struct PeerCertificate {
  // True only when the server verifies client certificates and this one verified against the
  // trust bundle the connection started with. When false, the fields below are empty.
  bool verified = false;
  std::string subject_common_name;
  std::vector<std::string> organizations;        // subject O values (Kubernetes groups)
  std::vector<certificates::Certificate> chain;  // the verified chain, client certificate first
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;  // "POST"
  std::string target;  // as sent: "/validate?timeout=10s"
  std::string path;    // target without the query: "/validate"
  std::string query;   // "timeout=10s"
  HeaderList headers;  // in order, names as sent
  std::string body;
  std::string remote_address;  // "127.0.0.1:53412"
  PeerCertificate peer;

  // The first header of that name, compared case-insensitively.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  HeaderList headers;  // besides Content-Type and Content-Length
  std::string body;

  static Response text(int status, std::string body);
  static Response json(int status, std::string body);
};

// Runs on a worker thread, never on the I/O thread, so it may block on a bounded call (an API
// read). An exception becomes a 500.
using Handler = std::function<Response(const Request&)>;

// One answered request, for metrics.
struct RequestRecord {
  std::string_view method;
  // The path or prefix the handler was registered with (bounded cardinality), "" when no route
  // matched (404/405) or the request never reached routing (400/413/431).
  std::string_view route;
  int status = 0;
  // From the request being read to the response being written.
  std::chrono::nanoseconds latency{};
};
using RequestObserver = std::function<void(const RequestRecord&)>;

}  // namespace shardscaler::serving
