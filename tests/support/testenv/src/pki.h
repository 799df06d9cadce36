// Certificates and keys (ECDSA P-256) for the test control plane, made by shardscaler's own
// certificates library.
// Test-only material: never used outside a throw-away work directory.
#pragma once

#include <filesystem>
#include <string>

namespace shardscaler::testenv::control_plane_detail {

struct PkiFiles {
  std::filesystem::path ca_cert;       // self-signed CA
  std::filesystem::path serving_cert;  // kube-apiserver, SAN IP:127.0.0.1, DNS:localhost, ...
  std::filesystem::path serving_key;
  std::filesystem::path service_account_key;     // private, signs service-account tokens
  std::filesystem::path service_account_pubkey;  // public, verifies them
};

// Writes a fresh CA, a serving certificate signed by it and a service-account key pair into
// `dir` (private keys mode 0600). Throws std::runtime_error with OpenSSL's reason on failure.
PkiFiles writePki(const std::filesystem::path& dir);

struct ServingPki {
  std::filesystem::path ca_cert;       // self-signed CA, for the clients' trust
  std::filesystem::path serving_cert;  // signed by it, SAN IP:127.0.0.1, DNS:localhost
  std::filesystem::path serving_key;
};

// Writes a fresh CA and a loopback serving certificate for a test server named `name` into `dir`
// as <name>-ca.crt, <name>.crt and <name>.key (key mode 0600). Throws as writePki does.
ServingPki writeServingPki(const std::filesystem::path& dir, const std::string& name);

// The aggregation layer's front proxy: the request-header CA and the client certificate
// kube-apiserver presents to aggregated API servers (CN kFrontProxyClientName, clientAuth).
inline constexpr const char* kFrontProxyClientName = "front-proxy-client";
struct FrontProxyPki {
  std::filesystem::path ca_cert;
  std::filesystem::path client_cert;
  std::filesystem::path client_key;
};

// Writes them into `dir` as front-proxy-ca.crt, front-proxy-client.crt and .key (key mode 0600).
// Throws as writePki does.
FrontProxyPki writeFrontProxyPki(const std::filesystem::path& dir);

}  // namespace shardscaler::testenv::control_plane_detail
