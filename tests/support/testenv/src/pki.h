// Certificates and keys for the test control plane, made with OpenSSL's library.
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

}  // namespace shardscaler::testenv::control_plane_detail
