// An HTTPS proxy between a client (shardscaler, kubectl) and the test control plane's
// kube-apiserver that misbehaves on demand: 500s, 409 Conflicts, 429s with Retry-After, cut
// watch streams, added latency. It never alters a request it forwards, never forwards a request
// it answered itself, and listens on 127.0.0.1 only.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>

namespace shardscaler::testenv {

class ControlPlane;

enum class ApiFault {
  ServerError,      // 500, Status reason InternalError, instead of forwarding
  Conflict,         // 409, Status reason Conflict, for a write, instead of forwarding
  TooManyRequests,  // 429, Retry-After: 1, Status reason TooManyRequests, instead of forwarding
  CutWatch,         // a forwarded watch stream closed after a random time
  Latency,          // the request held a random time before it goes on
};
std::string_view toString(ApiFault fault);  // "server_error", "conflict", ...

// Each rate is a probability in 0..1 per request the filter lets through; all draws come from
// one RNG seeded at construction, so one request sequence meets one fault sequence.
struct ApiFaultRates {
  double server_error = 0;
  double conflict = 0;  // only POST/PUT/PATCH/DELETE
  double too_many_requests = 0;
  double cut_watch = 0;  // only watches; the cut comes cut_after_min..cut_after_max after start
  std::chrono::milliseconds cut_after_min{200};
  std::chrono::milliseconds cut_after_max{3000};
  double latency = 0;  // latency_min..latency_max, before any other fault or the forwarding
  std::chrono::milliseconds latency_min{0};
  std::chrono::milliseconds latency_max{500};
  // Kubernetes verbs (get list watch create update patch delete deletecollection) faults may
  // hit; empty: every verb.
  std::set<std::string> verbs;
  // ECMAScript regex searched in the request path (no query), e.g. "/statefulsets(/|$)";
  // empty: every path.
  std::string path_regex;
};

struct ApiFaultCounts {
  std::uint64_t requests = 0;   // requests read from clients
  std::uint64_t forwarded = 0;  // of which passed to the API server (cut watches included)
  std::uint64_t server_error = 0;
  std::uint64_t conflict = 0;
  std::uint64_t too_many_requests = 0;
  std::uint64_t cut_watch = 0;  // counted when the cut happens, not when it is planned
  std::uint64_t latency = 0;
  std::uint64_t upstream_errors = 0;  // the API server could not be reached (answered 502)

  std::uint64_t injected() const {
    return server_error + conflict + too_many_requests + cut_watch + latency;
  }
};

struct ApiFaultProxyOptions {
  std::string upstream;               // https://127.0.0.1:<port> of kube-apiserver
  std::filesystem::path upstream_ca;  // the CA its serving certificate is verified with
  // The proxy's certificate and CA, the kubeconfigs it writes, and faults.log go here
  // (created if missing; never removed).
  std::filesystem::path work_dir;
  std::uint64_t seed = 1;
};

class ApiFaultProxy {
 public:
  // Listens on a free port of 127.0.0.1 at once, faults off. Throws std::runtime_error when the
  // certificate cannot be made or nothing can be bound, std::invalid_argument for a bad upstream.
  explicit ApiFaultProxy(const ApiFaultProxyOptions& options);
  // In front of `plane`; its files go to <plane work dir>/fault-proxy-<n>.
  explicit ApiFaultProxy(const ControlPlane& plane, std::uint64_t seed = 1);
  // stop().
  ~ApiFaultProxy();
  ApiFaultProxy(const ApiFaultProxy&) = delete;
  ApiFaultProxy& operator=(const ApiFaultProxy&) = delete;

  // https://127.0.0.1:<port>
  std::string server() const;
  int port() const;
  // The CA of the proxy's own serving certificate (clients verify the proxy, not the server).
  const std::filesystem::path& caFile() const;
  // Writes <work dir>/<name>.kubeconfig for `token` (passed through to the API server) pointing
  // at the proxy, as ControlPlane::writeKubeconfig does for the API server itself.
  std::filesystem::path writeKubeconfig(const std::string& name, const std::string& token,
                                        const std::string& ns = {}) const;
  // One JSON object per line for every fault injected: time, fault, verb, method, path, detail.
  const std::filesystem::path& faultLogPath() const;

  // Takes effect for requests read from now on (a watch already streaming keeps its plan).
  // Throws std::invalid_argument for a rate outside 0..1, min > max, or a bad regex.
  void setFaults(const ApiFaultRates& rates);
  // A clean pass-through from now on.
  void disableFaults();
  ApiFaultRates faults() const;
  ApiFaultCounts counts() const;

  // Closes the listener and every connection (watches end with an error at the client), and
  // joins the I/O thread, within about a second. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardscaler::testenv
