#include "shardscaler/e2e/pod_status_writer.h"

#include <chrono>

#include "shardscaler/e2e/cluster.h"

namespace shardscaler::e2e {

PodStatusWriter::PodStatusWriter(std::string ns, AddressOf address_of)
    : ns_(std::move(ns)),
      address_of_(std::move(address_of)),
      thread_([this](const std::stop_token& stop) { run(stop); }) {}

PodStatusWriter::~PodStatusWriter() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void PodStatusWriter::run(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    auto pods = adminClient().list(k8s::resources::pods(), ns_);
    if (pods) {
      for (const Json& pod : pods->value("items", Json::array())) {
        const std::string name = pod["metadata"].value("name", "");
        const Json status = pod.value("status", Json::object());
        const auto ip = address_of_(name);
        if (!ip || status.value("podIP", "") == *ip ||
            pod["metadata"].contains("deletionTimestamp")) {
          continue;
        }
        const Json patch = {
            {"status",
             {{"phase", "Running"},
              {"podIP", *ip},
              {"podIPs", Json::array({{{"ip", *ip}}})},
              {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}},
                                          {{"type", "ContainersReady"}, {"status", "True"}}})}}}};
        if (adminClient().patch(k8s::resources::pods(), ns_, name, k8s::PatchType::Merge, patch,
                                "status")) {
          ++marked_;
        }
      }
    }
    // A kubelet reports on its own schedule too; the StatefulSet controller makes pods any time.
    for (int i = 0; i < 4 && !stop.stop_requested(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

}  // namespace shardscaler::e2e
