// Where the client finds the API server and its credentials: kubeconfig files and the
// in-cluster service account. It only reads configuration; it never opens a connection.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/k8s_client/error.h"

namespace shardscaler::k8s {

struct KubeConfig {
  std::string server;  // "https://10.0.0.1:443", no trailing slash

  // TLS. PEM data wins over a file when both are set (kubectl's rule); files are read when
  // a connection is made, so a rotated file is picked up.
  std::string ca_file;
  std::string ca_data;
  bool insecure_skip_tls_verify = false;
  std::string client_cert_file;
  std::string client_cert_data;
  std::string client_key_file;
  std::string client_key_data;

  // Authentication. A static token wins over token_file; token_file is re-read at most every
  // token_refresh_interval (service-account tokens are rotated on disk).
  std::string token;
  std::string token_file;
  std::chrono::seconds token_refresh_interval{60};
  std::string username;  // basic auth, only when no token is set
  std::string password;

  // The context's namespace, the service account's namespace, else "default".
  std::string default_namespace = "default";

  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  // shardscaler sets its version (telemetry::buildInfo); the client library knows none.
  std::string user_agent = "shardscaler";

  // Where this came from, for messages: `kubeconfig "/x" context "y"` or "in-cluster".
  std::string origin;
};

// The service-account files a pod gets; tests point them elsewhere.
struct InClusterPaths {
  std::filesystem::path token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::filesystem::path ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::filesystem::path namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

// Parses one kubeconfig document. Relative file paths resolve against base_dir; context ""
// means current-context. Files it names (CA, certificate, key, token) must be readable now.
// Errors are ErrorKind::Config and name the file, the context and the problem.
Result<KubeConfig> parseKubeconfig(std::string_view yaml, std::string_view origin,
                                   const std::filesystem::path& base_dir,
                                   const std::string& context = {});

// Reads and merges kubeconfig files as kubectl does for $KUBECONFIG: the first file to
// define a cluster, user or context name wins, and the first current-context set wins. Files
// that do not exist are skipped, unless none exists.
Result<KubeConfig> loadKubeconfigFiles(const std::vector<std::filesystem::path>& files,
                                       const std::string& context = {});

// KUBERNETES_SERVICE_HOST/PORT plus the service-account token, CA and namespace.
Result<KubeConfig> loadInClusterConfig(std::string_view service_host, std::string_view service_port,
                                       const InClusterPaths& paths = {});

// What loadKubeConfig looks at, so tests need not touch the process environment.
struct ConfigSources {
  std::string kubeconfig_flag;  // --kubeconfig
  std::string kubeconfig_env;   // $KUBECONFIG, a colon-separated list
  std::string context;          // --context; "" = current-context
  std::string service_host;     // $KUBERNETES_SERVICE_HOST
  std::string service_port;     // $KUBERNETES_SERVICE_PORT
  InClusterPaths in_cluster;

  static ConfigSources fromEnvironment(std::string kubeconfig_flag = {}, std::string context = {});
};

// The service's loading order: --kubeconfig, else every file of $KUBECONFIG (merged), else
// in-cluster. Nothing configured at all is a Config error that says what was looked for.
Result<KubeConfig> loadKubeConfig(const ConfigSources& sources);

}  // namespace shardscaler::k8s
