#include "shardscaler/k8s_client/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <map>
#include <utility>

#include "file_contents.h"
#include "shardscaler/k8s_client/base64.h"

namespace shardscaler::k8s {
namespace {

namespace fs = std::filesystem;

std::string inQuotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

// One named cluster, user or context, with the file it came from (relative paths in it are
// relative to that file's folder, as kubectl resolves them).
struct Entry {
  YAML::Node body;
  fs::path base_dir;
  std::string origin;
};

struct MergedKubeconfig {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string current_context;
  std::string origin;  // every file, for messages about the whole
};

// kubeconfig data fields, as client-go reads them (Go's StdEncoding skips line breaks).
Result<std::string> base64Field(std::string_view text, const std::string& what) {
  std::string compact;
  compact.reserve(text.size());
  for (const char c : text) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') compact.push_back(c);
  }
  auto decoded = base64Decode(compact);
  if (!decoded) return makeError(ErrorKind::Config, what + " is not valid base64");
  return std::move(*decoded);
}

// A string field of a mapping; "" when absent; an error when it is not a scalar.
Result<std::string> stringField(const YAML::Node& map, const char* key, const std::string& where) {
  YAML::Node node = map[key];
  if (!node || node.IsNull()) return std::string();
  if (!node.IsScalar()) {
    return makeError(ErrorKind::Config, where + ": field \"" + key + "\" must be a string");
  }
  return node.Scalar();
}

Result<bool> boolField(const YAML::Node& map, const char* key, const std::string& where) {
  YAML::Node node = map[key];
  if (!node || node.IsNull()) return false;
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    return makeError(ErrorKind::Config, where + ": field \"" + key + "\" must be true or false");
  }
  return value;
}

fs::path resolvePath(const std::string& path, const fs::path& base_dir) {
  fs::path p(path);
  if (p.is_relative() && !base_dir.empty()) return base_dir / p;
  return p;
}

// Collects the named entries of one list ("clusters", "users", "contexts"); the first
// definition of a name wins.
Result<void> collectEntries(const YAML::Node& root, const char* list, const char* body_key,
                            const std::string& origin, const fs::path& base_dir,
                            std::map<std::string, Entry>& into) {
  YAML::Node items = root[list];
  if (!items || items.IsNull()) return {};
  if (!items.IsSequence()) {
    return makeError(ErrorKind::Config,
                     "kubeconfig " + origin + ": \"" + list + "\" must be a list");
  }
  for (const auto& item : items) {
    if (!item.IsMap()) {
      return makeError(ErrorKind::Config,
                       "kubeconfig " + origin + ": an entry of \"" + list + "\" is not a mapping");
    }
    auto name = stringField(item, "name", "kubeconfig " + origin + " " + list);
    if (!name) return std::unexpected(name.error());
    if (name->empty()) {
      return makeError(ErrorKind::Config,
                       "kubeconfig " + origin + ": an entry of \"" + list + "\" has no name");
    }
    YAML::Node body = item[body_key];
    if (body && !body.IsNull() && !body.IsMap()) {
      return makeError(ErrorKind::Config, "kubeconfig " + origin + ": " + body_key + " " +
                                              inQuotes(*name) + " is not a mapping");
    }
    into.try_emplace(*name, Entry{body ? body : YAML::Node(YAML::NodeType::Map), base_dir, origin});
  }
  return {};
}

Result<void> mergeRoot(MergedKubeconfig& merged, const YAML::Node& root, const std::string& origin,
                       const fs::path& base_dir);

Result<void> mergeDocument(MergedKubeconfig& merged, std::string_view yaml,
                           const std::string& origin, const fs::path& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    return makeError(ErrorKind::Config, "kubeconfig " + origin + " is malformed YAML: " + e.msg +
                                            " (line " + std::to_string(e.mark.line + 1) +
                                            ", column " + std::to_string(e.mark.column + 1) + ")");
  }
  try {
    return mergeRoot(merged, root, origin, base_dir);
  } catch (const YAML::Exception& e) {
    return makeError(ErrorKind::Config, "kubeconfig " + origin + ": " + e.what());
  }
}

Result<void> mergeRoot(MergedKubeconfig& merged, const YAML::Node& root, const std::string& origin,
                       const fs::path& base_dir) {
  if (root.IsNull()) return {};  // an empty file contributes nothing, as in kubectl
  if (!root.IsMap()) {
    return makeError(ErrorKind::Config,
                     "kubeconfig " + origin +
                         " is not a kubeconfig: expected a mapping with clusters, users and "
                         "contexts");
  }
  if (auto r = collectEntries(root, "clusters", "cluster", origin, base_dir, merged.clusters); !r)
    return r;
  if (auto r = collectEntries(root, "users", "user", origin, base_dir, merged.users); !r) return r;
  if (auto r = collectEntries(root, "contexts", "context", origin, base_dir, merged.contexts); !r)
    return r;
  if (merged.current_context.empty()) {
    auto current = stringField(root, "current-context", "kubeconfig " + origin);
    if (!current) return std::unexpected(current.error());
    merged.current_context = *current;
  }
  return {};
}

// Reads "<field>-data" (base64) or "<field>" (a file) into data/file and returns the bytes
// either way; the file must be readable now so that a typo fails at start-up, not on the
// first request.
Result<std::string> credentialSource(const Entry& entry, const std::string& field,
                                     const std::string& where, std::string& data,
                                     std::string& file) {
  auto encoded = stringField(entry.body, (field + "-data").c_str(), where);
  if (!encoded) return std::unexpected(encoded.error());
  if (!encoded->empty()) {
    auto decoded = base64Field(*encoded, where + ": " + field + "-data");
    if (!decoded) return std::unexpected(decoded.error());
    data = *decoded;
    return decoded;
  }
  auto path = stringField(entry.body, field.c_str(), where);
  if (!path) return std::unexpected(path.error());
  if (path->empty()) return std::string();
  file = resolvePath(*path, entry.base_dir).string();
  auto contents = detail::readFileContents(file, field + " file");
  if (!contents) return makeError(ErrorKind::Config, where + ": " + contents.error().message);
  if (contents->empty()) {
    return makeError(ErrorKind::Config,
                     where + ": " + field + " file " + inQuotes(file) + " is empty");
  }
  return contents;
}

bool looksLikePemCertificate(std::string_view pem) {
  return pem.find("-----BEGIN CERTIFICATE-----") != std::string_view::npos;
}

Result<void> readCluster(const Entry& cluster, const std::string& name, KubeConfig& config) {
  std::string where = "kubeconfig " + cluster.origin + " cluster " + inQuotes(name);
  auto server = stringField(cluster.body, "server", where);
  if (!server) return std::unexpected(server.error());
  if (server->empty()) return makeError(ErrorKind::Config, where + " has no server");
  config.server = *server;
  if (config.server.find("://") == std::string::npos) config.server = "https://" + config.server;
  while (config.server.ends_with('/')) config.server.pop_back();

  auto insecure = boolField(cluster.body, "insecure-skip-tls-verify", where);
  if (!insecure) return std::unexpected(insecure.error());
  config.insecure_skip_tls_verify = *insecure;

  auto ca_pem =
      credentialSource(cluster, "certificate-authority", where, config.ca_data, config.ca_file);
  if (!ca_pem) return std::unexpected(ca_pem.error());
  if (!ca_pem->empty() && !looksLikePemCertificate(*ca_pem)) {
    return makeError(
        ErrorKind::Config,
        where + ": certificate-authority " +
            (config.ca_data.empty() ? "file " + inQuotes(config.ca_file) : std::string("data")) +
            " holds no PEM certificate");
  }
  return {};
}

Result<void> readUser(const Entry& user, const std::string& name, KubeConfig& config) {
  std::string where = "kubeconfig " + user.origin + " user " + inQuotes(name);
  auto token = stringField(user.body, "token", where);
  if (!token) return std::unexpected(token.error());
  config.token = *token;
  auto token_file = stringField(user.body, "tokenFile", where);
  if (!token_file) return std::unexpected(token_file.error());
  if (config.token.empty() && !token_file->empty()) {
    config.token_file = resolvePath(*token_file, user.base_dir).string();
    auto contents = detail::readFileContents(config.token_file, "tokenFile");
    if (!contents) return makeError(ErrorKind::Config, where + ": " + contents.error().message);
  }
  if (auto cert = credentialSource(user, "client-certificate", where, config.client_cert_data,
                                   config.client_cert_file);
      !cert) {
    return std::unexpected(cert.error());
  }
  if (auto key = credentialSource(user, "client-key", where, config.client_key_data,
                                  config.client_key_file);
      !key) {
    return std::unexpected(key.error());
  }
  bool has_cert = !config.client_cert_data.empty() || !config.client_cert_file.empty();
  bool has_key = !config.client_key_data.empty() || !config.client_key_file.empty();
  if (has_cert != has_key) {
    return makeError(ErrorKind::Config, where + " has a client " +
                                            (has_cert ? "certificate but no client key"
                                                      : "key but no client certificate"));
  }
  auto username = stringField(user.body, "username", where);
  if (!username) return std::unexpected(username.error());
  auto password = stringField(user.body, "password", where);
  if (!password) return std::unexpected(password.error());
  config.username = *username;
  config.password = *password;

  bool has_credentials =
      !config.token.empty() || !config.token_file.empty() || has_cert || !config.username.empty();
  for (const char* plugin : {"exec", "auth-provider"}) {
    if (user.body[plugin] && !has_credentials) {
      return makeError(ErrorKind::Config,
                       where + " authenticates through an " + plugin +
                           " plugin, which shardscaler does not run; give it a token, a "
                           "tokenFile or a client certificate");
    }
  }
  return {};
}

Result<KubeConfig> resolveContextUnguarded(const MergedKubeconfig& merged,
                                           const std::string& wanted) {
  std::string context_name = wanted.empty() ? merged.current_context : wanted;
  if (context_name.empty()) {
    return makeError(ErrorKind::Config, "kubeconfig " + merged.origin +
                                            " sets no current-context and no context was given");
  }
  auto context = merged.contexts.find(context_name);
  if (context == merged.contexts.end()) {
    std::string known;
    for (const auto& [name, entry] : merged.contexts) {
      known += (known.empty() ? "" : ", ") + inQuotes(name);
    }
    return makeError(ErrorKind::Config,
                     "kubeconfig " + merged.origin + ": context " + inQuotes(context_name) +
                         (wanted.empty() ? " (its current-context)" : "") + " is not defined" +
                         (known.empty() ? "; it defines no contexts" : "; defined: " + known));
  }
  std::string where = "kubeconfig " + context->second.origin + " context " + inQuotes(context_name);
  auto cluster_name = stringField(context->second.body, "cluster", where);
  if (!cluster_name) return std::unexpected(cluster_name.error());
  auto user_name = stringField(context->second.body, "user", where);
  if (!user_name) return std::unexpected(user_name.error());
  auto ns = stringField(context->second.body, "namespace", where);
  if (!ns) return std::unexpected(ns.error());

  KubeConfig config;
  config.origin = "kubeconfig " + merged.origin + " context " + inQuotes(context_name);
  if (!ns->empty()) config.default_namespace = *ns;

  if (cluster_name->empty()) return makeError(ErrorKind::Config, where + " names no cluster");
  auto cluster = merged.clusters.find(*cluster_name);
  if (cluster == merged.clusters.end()) {
    return makeError(ErrorKind::Config, where + " refers to cluster " + inQuotes(*cluster_name) +
                                            ", which is not defined");
  }
  if (auto r = readCluster(cluster->second, *cluster_name, config); !r) {
    return std::unexpected(r.error());
  }
  // A context without a user is legal (anonymous, or a server that wants no credentials).
  if (!user_name->empty()) {
    auto user = merged.users.find(*user_name);
    if (user == merged.users.end()) {
      return makeError(ErrorKind::Config, where + " refers to user " + inQuotes(*user_name) +
                                              ", which is not defined");
    }
    if (auto r = readUser(user->second, *user_name, config); !r) {
      return std::unexpected(r.error());
    }
  }
  return config;
}

// yaml-cpp reports some shape problems by throwing; they become Config errors too.
Result<KubeConfig> resolveContext(const MergedKubeconfig& merged, const std::string& wanted) {
  try {
    return resolveContextUnguarded(merged, wanted);
  } catch (const YAML::Exception& e) {
    return makeError(ErrorKind::Config, "kubeconfig " + merged.origin + ": " + e.what());
  }
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  return text;
}

}  // namespace

Result<KubeConfig> parseKubeconfig(std::string_view yaml, std::string_view origin,
                                   const fs::path& base_dir, const std::string& context) {
  MergedKubeconfig merged;
  merged.origin = std::string(origin);
  if (auto r = mergeDocument(merged, yaml, merged.origin, base_dir); !r) {
    return std::unexpected(r.error());
  }
  return resolveContext(merged, context);
}

Result<KubeConfig> loadKubeconfigFiles(const std::vector<fs::path>& files,
                                       const std::string& context) {
  MergedKubeconfig merged;
  std::vector<fs::path> present;
  for (const auto& file : files) {
    std::error_code ec;
    if (files.size() == 1 || fs::exists(file, ec)) present.push_back(file);
  }
  if (present.empty()) {
    std::string list;
    for (const auto& file : files) list += (list.empty() ? "" : ", ") + inQuotes(file.string());
    return makeError(ErrorKind::Config, "none of the kubeconfig files exists: " + list);
  }
  for (const auto& file : present) {
    merged.origin += (merged.origin.empty() ? "" : "+") + inQuotes(file.string());
  }
  for (const auto& file : present) {
    auto contents = detail::readFileContents(file, "kubeconfig");
    if (!contents) return std::unexpected(contents.error());
    if (auto r = mergeDocument(merged, *contents, inQuotes(file.string()), file.parent_path());
        !r) {
      return std::unexpected(r.error());
    }
  }
  return resolveContext(merged, context);
}

Result<KubeConfig> loadInClusterConfig(std::string_view service_host, std::string_view service_port,
                                       const InClusterPaths& paths) {
  if (service_host.empty() || service_port.empty()) {
    return makeError(ErrorKind::Config,
                     "in-cluster configuration needs KUBERNETES_SERVICE_HOST and "
                     "KUBERNETES_SERVICE_PORT, and they are not set");
  }
  KubeConfig config;
  config.origin = "in-cluster";
  std::string host(service_host);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6 literal
  config.server = "https://" + host + ":" + std::string(service_port);

  auto token = detail::readFileContents(paths.token_file, "service-account token file");
  if (!token) return makeError(ErrorKind::Config, "in-cluster: " + token.error().message);
  if (trimmed(*token).empty()) {
    return makeError(ErrorKind::Config, "in-cluster: service-account token file " +
                                            inQuotes(paths.token_file.string()) + " is empty");
  }
  config.token_file = paths.token_file.string();

  auto ca = detail::readFileContents(paths.ca_file, "service-account CA file");
  if (!ca) return makeError(ErrorKind::Config, "in-cluster: " + ca.error().message);
  if (!looksLikePemCertificate(*ca)) {
    return makeError(ErrorKind::Config, "in-cluster: service-account CA file " +
                                            inQuotes(paths.ca_file.string()) +
                                            " holds no PEM certificate");
  }
  config.ca_file = paths.ca_file.string();

  // The namespace file is optional (older clusters); "default" then, as client-go does.
  auto ns = detail::readFileContents(paths.namespace_file, "service-account namespace file");
  if (ns && !trimmed(*ns).empty()) config.default_namespace = trimmed(*ns);
  return config;
}

ConfigSources ConfigSources::fromEnvironment(std::string kubeconfig_flag, std::string context) {
  auto env = [](const char* name) {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): start-up only
    return value ? std::string(value) : std::string();
  };
  ConfigSources sources;
  sources.kubeconfig_flag = std::move(kubeconfig_flag);
  sources.context = std::move(context);
  sources.kubeconfig_env = env("KUBECONFIG");
  sources.service_host = env("KUBERNETES_SERVICE_HOST");
  sources.service_port = env("KUBERNETES_SERVICE_PORT");
  return sources;
}

Result<KubeConfig> loadKubeConfig(const ConfigSources& sources) {
  if (!sources.kubeconfig_flag.empty()) {
    return loadKubeconfigFiles({fs::path(sources.kubeconfig_flag)}, sources.context);
  }
  if (!sources.kubeconfig_env.empty()) {
    std::vector<fs::path> files;
    std::string_view rest = sources.kubeconfig_env;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view piece = rest.substr(0, colon);
      if (!piece.empty()) files.emplace_back(piece);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    if (!files.empty()) return loadKubeconfigFiles(files, sources.context);
  }
  if (sources.service_host.empty() && sources.service_port.empty()) {
    return makeError(ErrorKind::Config,
                     "no Kubernetes configuration: no --kubeconfig was given, $KUBECONFIG is not "
                     "set, and this is not a pod (KUBERNETES_SERVICE_HOST and "
                     "KUBERNETES_SERVICE_PORT are not set)");
  }
  return loadInClusterConfig(sources.service_host, sources.service_port, sources.in_cluster);
}

}  // namespace shardscaler::k8s
