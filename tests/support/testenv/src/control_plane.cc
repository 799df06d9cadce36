#include "shardscaler/testenv/control_plane.h"

#include <openssl/rand.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "kube_binaries.h"
#include "kubeconfig_file.h"
#include "pki.h"
#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/loopback_ports.h"
#include "work_dir.h"

namespace shardscaler::testenv {
// The helpers live in their own namespace so they never collide with other test fixtures'
// helpers in shardscaler::testenv (several fixture libraries link into one test binary).
using namespace control_plane_detail;  // NOLINT(google-build-using-namespace)

namespace {

using Clock = std::chrono::steady_clock;
using test_kit::httpGet;

// Matches the serving certificate's IP:10.0.0.1 (the "kubernetes" Service takes the first IP).
constexpr const char* kServiceClusterIpRange = "10.0.0.0/24";
constexpr const char* kServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local";
constexpr int kStartAttempts = 3;
constexpr auto kKubectlTimeout = std::chrono::minutes(2);
constexpr auto kStopGrace = std::chrono::seconds(10);
// A server caught half-way through start-up may not act on SIGTERM yet, and there is nothing of
// its state to keep.
constexpr auto kFailedStartGrace = std::chrono::seconds(2);

// A start-up failure; a port taken between pickFreePorts() and the server's bind is retried.
class StartFailure : public std::runtime_error {
 public:
  StartFailure(const std::string& message, bool port_clash)
      : std::runtime_error(message), port_clash_(port_clash) {}
  bool portClash() const { return port_clash_; }

 private:
  bool port_clash_;
};

std::string randomToken() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("testenv: RAND_bytes failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xf];
  }
  return token;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string logTail(const std::filesystem::path& log, int max_lines = 40) {
  const std::string text = readFile(log);
  size_t pos = text.size();
  for (int lines = 0; pos > 0 && lines <= max_lines;) {
    if (text[--pos] == '\n') ++lines;
  }
  return text.substr(pos == 0 ? 0 : pos + 1);
}

std::string shellQuote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

struct ControlPlane::State {
  explicit State(ControlPlaneOptions opts)
      : options(std::move(opts)), binaries(locateKubeBinaries()), work_dir(options.work_dir) {}
  ~State() { stopServers(kStopGrace); }

  void prepare();
  void start();
  void stopServers(std::chrono::milliseconds grace);
  void recordPids() const;
  std::filesystem::path writeKubeconfig(const std::string& name, const std::string& token,
                                        const std::string& ns) const;
  // Polls `ready` until it returns true; fails early if `process` exits, at the deadline, or
  // when options.interrupted says so. `ready` may leave why it is not ready yet in *why.
  void waitUntilReady(ChildProcess& process, const std::function<bool(std::string*)>& ready);
  std::vector<std::string> childEnvironment() const;

  ControlPlaneOptions options;
  KubeBinaries binaries;
  WorkDir work_dir;
  PkiFiles pki;
  std::optional<FrontProxyPki> front_proxy;  // with options.aggregation_layer
  std::string admin_token;
  std::vector<std::string> user_tokens;
  std::filesystem::path token_file;
  std::filesystem::path kubeconfig;
  std::filesystem::path kubectl_cache;
  std::string server;
  Clock::time_point deadline;
  std::unique_ptr<ChildProcess> etcd;
  std::unique_ptr<ChildProcess> apiserver;
  std::unique_ptr<ChildProcess> controller_manager;
};

void ControlPlane::State::prepare() {
  const auto& dir = work_dir.path();
  std::filesystem::create_directories(dir / "pki");
  pki = writePki(dir / "pki");
  if (options.aggregation_layer) front_proxy = writeFrontProxyPki(dir / "pki");
  admin_token = randomToken();
  // Static token file: token,user,uid,"groups". Only the admin is in a group with rights.
  std::string tokens = admin_token + ",admin,uid-admin,\"system:masters\"\n";
  for (int i = 1; i <= kUserCount; ++i) {
    user_tokens.push_back(randomToken());
    tokens +=
        user_tokens.back() + ",user-" + std::to_string(i) + ",uid-user-" + std::to_string(i) + "\n";
  }
  token_file = dir / "tokens.csv";
  writePrivateFile(token_file, tokens);
  kubectl_cache = dir / "kubectl-cache";
}

std::vector<std::string> ControlPlane::State::childEnvironment() const {
  // A fixed environment: a stray ETCD_* or KUBERNETES_* variable of the caller must not change
  // how the servers behave.
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "HOME=" + work_dir.path().string()};
}

void ControlPlane::State::recordPids() const {
  std::vector<std::pair<std::string, pid_t>> servers;
  for (const auto* child : {etcd.get(), apiserver.get(), controller_manager.get()}) {
    if (child) servers.emplace_back(child->name(), child->pid());
  }
  work_dir.recordPids(servers);
}

void ControlPlane::State::waitUntilReady(ChildProcess& process,
                                         const std::function<bool(std::string*)>& ready) {
  std::string why = "no answer yet";
  while (true) {
    if (options.interrupted && options.interrupted()) {
      throw std::runtime_error("testenv: start-up interrupted while waiting for " + process.name());
    }
    if (auto status = process.exitStatus()) {
      const std::string tail = logTail(process.logFile());
      throw StartFailure("testenv: " + process.name() + " " + describeWaitStatus(*status) +
                             " during start-up; last lines of " + process.logFile().string() +
                             ":\n" + tail,
                         tail.find("address already in use") != std::string::npos);
    }
    if (ready(&why)) return;
    if (Clock::now() >= deadline) {
      throw StartFailure("testenv: " + process.name() + " was not ready within " +
                             std::to_string(options.start_timeout.count()) + " s (" + why +
                             "); last lines of " + process.logFile().string() + ":\n" +
                             logTail(process.logFile()),
                         false);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void ControlPlane::State::start() {
  const auto ports = pickFreePorts(4);
  const int etcd_client_port = ports[0], etcd_peer_port = ports[1], apiserver_port = ports[2],
            controller_manager_port = ports[3];
  const auto& dir = work_dir.path();
  const auto env = childEnvironment();
  std::filesystem::remove_all(work_dir.etcdDataDir());

  const std::string etcd_url = "http://127.0.0.1:" + std::to_string(etcd_client_port);
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(etcd_peer_port);
  etcd = std::make_unique<ChildProcess>(
      "etcd",
      std::vector<std::string>{
          binaries.etcd.string(), "--name=testenv", "--data-dir=" + work_dir.etcdDataDir().string(),
          "--listen-client-urls=" + etcd_url, "--advertise-client-urls=" + etcd_url,
          "--listen-peer-urls=" + peer_url, "--initial-advertise-peer-urls=" + peer_url,
          "--initial-cluster=testenv=" + peer_url, "--initial-cluster-state=new", "--logger=zap",
          "--log-outputs=stderr", "--log-level=warn"},
      env, work_dir.logDir() / "etcd.log");
  recordPids();
  waitUntilReady(*etcd, [&](std::string* why) {
    auto response = httpGet(etcd_url + "/health", {});
    *why = response.error.empty()
               ? "GET /health: HTTP " + std::to_string(response.status) + " " + response.body
               : "GET /health: " + response.error;
    return response.status == 200 && response.body.find("true") != std::string::npos;
  });

  std::vector<std::string> apiserver_args = {
      binaries.kube_apiserver.string(), "--etcd-servers=" + etcd_url, "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1", "--secure-port=" + std::to_string(apiserver_port),
      "--insecure-port=0", "--tls-cert-file=" + pki.serving_cert.string(),
      "--tls-private-key-file=" + pki.serving_key.string(),
      "--cert-dir=" + (dir / "apiserver-certs").string(),
      // Also publishes the extension-apiserver-authentication ConfigMap, which the
      // controller-manager's delegated authentication otherwise keeps asking for.
      "--client-ca-file=" + pki.ca_cert.string(), "--token-auth-file=" + token_file.string(),
      "--authorization-mode=RBAC", "--service-account-issuer=" + std::string(kServiceAccountIssuer),
      "--service-account-key-file=" + pki.service_account_pubkey.string(),
      "--service-account-signing-key-file=" + pki.service_account_key.string(),
      "--service-cluster-ip-range=" + std::string(kServiceClusterIpRange),
      // Endpoints may not hold a loopback address, so the "kubernetes" Service gets none
      // instead of a reconciler failing forever.
      "--endpoint-reconciler-type=none", "--allow-privileged=true", "--profiling=false",
      // As OpenShift runs it: setting blockOwnerDeletion needs `update` on the owner's
      // finalizers, as the operator's shards and shardscaler's re-attach carry it.
      "--enable-admission-plugins=OwnerReferencesPermissionEnforcement"};
  if (front_proxy) {
    apiserver_args.insert(
        apiserver_args.end(),
        {"--requestheader-client-ca-file=" + front_proxy->ca_cert.string(),
         "--requestheader-allowed-names=" + std::string(kFrontProxyClientName),
         "--requestheader-username-headers=X-Remote-User",
         "--requestheader-group-headers=X-Remote-Group",
         "--requestheader-extra-headers-prefix=X-Remote-Extra-",
         "--proxy-client-cert-file=" + front_proxy->client_cert.string(),
         "--proxy-client-key-file=" + front_proxy->client_key.string(),
         // Dial the Endpoints' address, not the Service's cluster IP: there is no kube-proxy.
         "--enable-aggregator-routing=true"});
  }
  apiserver_args.insert(apiserver_args.end(), options.extra_apiserver_flags.begin(),
                        options.extra_apiserver_flags.end());
  apiserver = std::make_unique<ChildProcess>("kube-apiserver", apiserver_args, env,
                                             work_dir.logDir() / "kube-apiserver.log");
  recordPids();
  server = "https://127.0.0.1:" + std::to_string(apiserver_port);
  const test_kit::HttpGetOptions admin_probe{.ca_file = pki.ca_cert, .bearer_token = admin_token};
  // Ready, and the bootstrap controller has made the "default" namespace (it does so just
  // after /readyz turns 200), which kubectl users and some tests take for granted.
  waitUntilReady(*apiserver, [&](std::string* why) {
    auto response = httpGet(server + "/readyz", admin_probe);
    *why = response.error.empty()
               ? "GET /readyz: HTTP " + std::to_string(response.status) + " " + response.body
               : "GET /readyz: " + response.error;
    if (response.status != 200) return false;
    response = httpGet(server + "/api/v1/namespaces/default", admin_probe);
    *why = "namespace default: " +
           (response.error.empty() ? "HTTP " + std::to_string(response.status) : response.error);
    return response.status == 200;
  });
  kubeconfig = writeKubeconfig("admin", admin_token, "");
  if (!options.start_controller_manager) return;

  const auto kcm_kubeconfig = writeKubeconfig("controller-manager", admin_token, "");
  // Each controller runs as its own ServiceAccount (--use-service-account-credentials), as
  // kubeadm runs them: the shard guard sees the garbage collector and the namespace controller as
  // who they are in a real cluster.
  std::vector<std::string> kcm_args = {
      binaries.kube_controller_manager.string(),
      "--kubeconfig=" + kcm_kubeconfig.string(),
      "--authentication-kubeconfig=" + kcm_kubeconfig.string(),
      "--authorization-kubeconfig=" + kcm_kubeconfig.string(),
      "--bind-address=127.0.0.1",
      "--secure-port=" + std::to_string(controller_manager_port),
      "--port=0",
      "--cert-dir=" + (dir / "controller-manager-certs").string(),
      "--leader-elect=false",
      "--controllers=*",
      "--use-service-account-credentials",
      "--service-account-private-key-file=" + pki.service_account_key.string(),
      "--root-ca-file=" + pki.ca_cert.string(),
      "--horizontal-pod-autoscaler-sync-period=2s",
      "--profiling=false"};
  kcm_args.insert(kcm_args.end(), options.extra_controller_manager_flags.begin(),
                  options.extra_controller_manager_flags.end());
  controller_manager = std::make_unique<ChildProcess>(
      "kube-controller-manager", kcm_args, env, work_dir.logDir() / "kube-controller-manager.log");
  recordPids();
  // Controllers are working once the ServiceAccount controller made "default" and the token
  // controller gave it a Secret; before that, creating a pod fails in admission.
  waitUntilReady(*controller_manager, [&](std::string* why) {
    auto response =
        httpGet(server + "/api/v1/namespaces/default/serviceaccounts/default", admin_probe);
    if (response.status != 200) {
      *why = "ServiceAccount default/default: " +
             (response.error.empty() ? "HTTP " + std::to_string(response.status) : response.error);
      return false;
    }
    auto sa = nlohmann::json::parse(response.body, nullptr, false);
    *why = "ServiceAccount default/default has no token Secret yet";
    return sa.is_object() && sa.contains("secrets") && sa["secrets"].is_array() &&
           !sa["secrets"].empty();
  });
}

void ControlPlane::State::stopServers(std::chrono::milliseconds grace) {
  // The API server and controller-manager stop together; etcd last, so neither spends its
  // grace period retrying a vanished etcd.
  for (auto* child : {controller_manager.get(), apiserver.get()}) {
    if (child) child->terminate();
  }
  for (auto* child : {controller_manager.get(), apiserver.get(), etcd.get()}) {
    if (child) child->stop(grace);
  }
  controller_manager.reset();
  apiserver.reset();
  etcd.reset();
}

std::filesystem::path ControlPlane::State::writeKubeconfig(const std::string& name,
                                                           const std::string& token,
                                                           const std::string& ns) const {
  return writeKubeconfigFile(
      work_dir.path(),
      KubeconfigSpec{
          .server = server, .ca_file = pki.ca_cert, .user = name, .token = token, .ns = ns});
}

ControlPlane::ControlPlane(ControlPlaneOptions options) {
  requireMainThread("shardscaler::testenv::ControlPlane");
  state_ = std::make_unique<State>(std::move(options));
  try {
    state_->prepare();
    state_->deadline = Clock::now() + state_->options.start_timeout;
    for (int attempt = 1;; ++attempt) {
      try {
        state_->start();
        break;
      } catch (const StartFailure& failure) {
        state_->stopServers(kFailedStartGrace);
        if (!failure.portClash() || attempt == kStartAttempts) throw;
        std::cerr << "testenv: warning: a port was taken during start-up; retrying on new ports"
                  << std::endl;
      }
    }
  } catch (...) {
    state_->stopServers(kFailedStartGrace);
    state_->work_dir.keep();  // the logs explain the failure
    throw;
  }
}

ControlPlane::~ControlPlane() = default;

const std::string& ControlPlane::server() const { return state_->server; }
int ControlPlane::port() const {
  return std::stoi(state_->server.substr(state_->server.rfind(':') + 1));
}
const std::filesystem::path& ControlPlane::kubeconfigPath() const { return state_->kubeconfig; }
const std::filesystem::path& ControlPlane::caFile() const { return state_->pki.ca_cert; }
const std::string& ControlPlane::adminToken() const { return state_->admin_token; }
const std::filesystem::path& ControlPlane::workDir() const { return state_->work_dir.path(); }

std::string ControlPlane::userToken(int index) const {
  if (index < 1 || index > kUserCount) {
    throw std::out_of_range("testenv: userToken(" + std::to_string(index) + "): users are 1.." +
                            std::to_string(kUserCount));
  }
  return state_->user_tokens[static_cast<size_t>(index - 1)];
}

std::filesystem::path ControlPlane::writeKubeconfig(const std::string& name,
                                                    const std::string& token,
                                                    const std::string& ns) const {
  return state_->writeKubeconfig(name, token, ns);
}

std::filesystem::path ControlPlane::writeAdminKubeconfigVia(const std::string& name,
                                                            const std::string& server) const {
  return writeKubeconfigFile(state_->work_dir.path(), KubeconfigSpec{.server = server,
                                                                     .ca_file = state_->pki.ca_cert,
                                                                     .user = name,
                                                                     .token = state_->admin_token});
}

int ControlPlane::kubectl(const std::string& args, std::string* out, std::string* err,
                          const std::string& input) const {
  // A private discovery cache: the default one under $HOME would collect a directory per port.
  const std::string command = "exec " + shellQuote(state_->binaries.kubectl.string()) +
                              " --kubeconfig=" + shellQuote(state_->kubeconfig.string()) +
                              " --cache-dir=" + shellQuote(state_->kubectl_cache.string()) + " " +
                              args;
  auto result = runCommand({"/bin/sh", "-c", command}, input, kKubectlTimeout);
  if (out) *out = std::move(result.out);
  if (err) *err = std::move(result.err);
  return result.exit_code;
}

void ControlPlane::writeEnvFile(const std::filesystem::path& path) const {
  std::string content =
      "export KUBECONFIG=" + shellQuote(state_->kubeconfig.string()) + "\n" +
      "export SHARDSCALER_TESTENV_SERVER=" + shellQuote(state_->server) + "\n" +
      "export SHARDSCALER_TESTENV_CA_FILE=" + shellQuote(state_->pki.ca_cert.string()) + "\n" +
      "export SHARDSCALER_TESTENV_ADMIN_TOKEN=" + shellQuote(state_->admin_token) + "\n";
  for (int i = 1; i <= kUserCount; ++i) {
    content += "export SHARDSCALER_TESTENV_USER_TOKEN_" + std::to_string(i) + "=" +
               shellQuote(userToken(i)) + "\n";
  }
  content += "export SHARDSCALER_TESTENV_WORK_DIR=" + shellQuote(workDir().string()) + "\n";
  writePrivateFile(path, content);
}

std::vector<pid_t> ControlPlane::serverPids() const {
  std::vector<pid_t> pids;
  for (const auto* child :
       {state_->etcd.get(), state_->apiserver.get(), state_->controller_manager.get()}) {
    if (child) pids.push_back(child->pid());
  }
  return pids;
}

void ControlPlane::keepWorkDir() { state_->work_dir.keep(); }

}  // namespace shardscaler::testenv
