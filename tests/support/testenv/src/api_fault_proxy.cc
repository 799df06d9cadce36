#include "shardscaler/testenv/api_fault_proxy.h"

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "kubeconfig_file.h"
#include "pki.h"
#include "proxy_session.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::testenv {

using namespace control_plane_detail;  // NOLINT(google-build-using-namespace)

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr auto kStopBudget = std::chrono::milliseconds(900);

// https://<IPv4 or IPv6 literal>:<port>; the proxy forwards to loopback servers only.
tcp::endpoint parseUpstream(const std::string& url) {
  const std::string scheme = "https://";
  if (url.rfind(scheme, 0) != 0) {
    throw std::invalid_argument("ApiFaultProxy: upstream must be https://<ip>:<port>, not " + url);
  }
  std::string hostport = url.substr(scheme.size());
  if (const auto slash = hostport.find('/'); slash != std::string::npos) {
    hostport.resize(slash);
  }
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("ApiFaultProxy: upstream has no port: " + url);
  }
  std::string host = hostport.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec || !address.is_loopback()) {
    throw std::invalid_argument("ApiFaultProxy: upstream must be a loopback IP, not " + host);
  }
  int port = 0;
  try {
    port = std::stoi(hostport.substr(colon + 1));
  } catch (const std::exception&) {
    port = 0;
  }
  if (port <= 0 || port > 65535) {
    throw std::invalid_argument("ApiFaultProxy: bad upstream port in " + url);
  }
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

std::filesystem::path nextWorkDir(const ControlPlane& plane) {
  static std::atomic<int> counter{0};
  return plane.workDir() / ("fault-proxy-" + std::to_string(++counter));
}

}  // namespace

std::string_view toString(ApiFault fault) {
  switch (fault) {
    case ApiFault::ServerError:
      return "server_error";
    case ApiFault::Conflict:
      return "conflict";
    case ApiFault::TooManyRequests:
      return "too_many_requests";
    case ApiFault::CutWatch:
      return "cut_watch";
    case ApiFault::Latency:
      return "latency";
  }
  return "unknown";
}

struct ApiFaultProxy::Impl {
  explicit Impl(const ApiFaultProxyOptions& options)
      : work_dir((std::filesystem::create_directories(options.work_dir), options.work_dir)),
        pki(writeServingPki(work_dir, "fault-proxy")),
        state(options.seed, work_dir / "faults.log") {
    state.upstream = parseUpstream(options.upstream);
    state.server_tls.set_options(asio::ssl::context::default_workarounds |
                                 asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3);
    state.server_tls.use_certificate_chain_file(pki.serving_cert.string());
    state.server_tls.use_private_key_file(pki.serving_key.string(), asio::ssl::context::pem);
    state.client_tls.load_verify_file(options.upstream_ca.string());
    state.client_tls.set_verify_mode(asio::ssl::verify_peer);

    const tcp::endpoint loopback(asio::ip::address_v4::loopback(), 0);  // a free port
    acceptor.open(loopback.protocol());
    acceptor.bind(loopback);
    acceptor.listen(asio::socket_base::max_listen_connections);
    port = acceptor.local_endpoint().port();
    accept();
    thread = std::thread([this] {
      ioc.run();
      finished.set_value();
    });
  }

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;  // closed by stop()
      std::erase_if(sessions, [](const auto& weak) { return weak.expired(); });
      auto session = std::make_shared<ProxySession>(state, std::move(socket));
      sessions.push_back(session);
      session->start();
      accept();
    });
  }

  void stop() {
    if (stopped.exchange(true)) return;
    asio::post(ioc, [this] {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      for (auto& weak : sessions) {
        if (auto session = weak.lock()) session->close();
      }
    });
    // Every operation ends once its socket is closed; a stuck one is abandoned at the budget.
    if (finished.get_future().wait_for(kStopBudget) != std::future_status::ready) ioc.stop();
    thread.join();
  }

  std::filesystem::path work_dir;
  ServingPki pki;
  // Before the io_context, so it outlives the sessions that the io_context's pending handlers
  // own (they borrow its TLS contexts and counters).
  FaultProxyState state;
  // Before everything bound to it: destroying it destroys those sessions.
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  int port = 0;
  std::vector<std::weak_ptr<ProxySession>> sessions;  // I/O thread only
  std::promise<void> finished;
  std::thread thread;
  std::atomic<bool> stopped{false};
};

ApiFaultProxy::ApiFaultProxy(const ApiFaultProxyOptions& options) {
  try {
    impl_ = std::make_unique<Impl>(options);
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(std::string("ApiFaultProxy: ") + e.what());
  }
}

ApiFaultProxy::ApiFaultProxy(const ControlPlane& plane, std::uint64_t seed)
    : ApiFaultProxy(ApiFaultProxyOptions{.upstream = plane.server(),
                                         .upstream_ca = plane.caFile(),
                                         .work_dir = nextWorkDir(plane),
                                         .seed = seed}) {}

ApiFaultProxy::~ApiFaultProxy() { stop(); }

void ApiFaultProxy::stop() { impl_->stop(); }

std::string ApiFaultProxy::server() const {
  return "https://127.0.0.1:" + std::to_string(impl_->port);
}

int ApiFaultProxy::port() const { return impl_->port; }

const std::filesystem::path& ApiFaultProxy::caFile() const { return impl_->pki.ca_cert; }

std::filesystem::path ApiFaultProxy::writeKubeconfig(const std::string& name,
                                                     const std::string& token,
                                                     const std::string& ns) const {
  return writeKubeconfigFile(impl_->work_dir, KubeconfigSpec{.server = server(),
                                                             .ca_file = impl_->pki.ca_cert,
                                                             .user = name,
                                                             .token = token,
                                                             .ns = ns});
}

const std::filesystem::path& ApiFaultProxy::faultLogPath() const { return impl_->state.log.path(); }

void ApiFaultProxy::setFaults(const ApiFaultRates& rates) { impl_->state.plan.set(rates); }

void ApiFaultProxy::disableFaults() { impl_->state.plan.disable(); }

ApiFaultRates ApiFaultProxy::faults() const { return impl_->state.plan.rates(); }

ApiFaultCounts ApiFaultProxy::counts() const {
  const auto& c = impl_->state.counters;
  return ApiFaultCounts{.requests = c.requests,
                        .forwarded = c.forwarded,
                        .server_error = c.server_error,
                        .conflict = c.conflict,
                        .too_many_requests = c.too_many_requests,
                        .cut_watch = c.cut_watch,
                        .latency = c.latency,
                        .upstream_errors = c.upstream_errors};
}

}  // namespace shardscaler::testenv
