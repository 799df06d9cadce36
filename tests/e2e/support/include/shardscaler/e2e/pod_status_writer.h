// Stands in for the kubelet, which the test control plane has none of: every pod of a namespace
// that the test gives an address for (the loopback address of the process playing it) is marked
// Running and Ready with that address as its IP. It writes pod status only, nothing else.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace shardscaler::e2e {

class PodStatusWriter {
 public:
  // The IP of a pod by its name; nullopt leaves the pod as it is (Pending, as made).
  using AddressOf = std::function<std::optional<std::string>(const std::string& pod)>;

  // Starts writing at once, every 200 ms, until destroyed. `address_of` runs on its thread.
  PodStatusWriter(std::string ns, AddressOf address_of);
  ~PodStatusWriter();
  PodStatusWriter(const PodStatusWriter&) = delete;
  PodStatusWriter& operator=(const PodStatusWriter&) = delete;

  // Pods marked Running so far (a pod made again counts again).
  int marked() const { return marked_.load(); }

 private:
  void run(const std::stop_token& stop);

  std::string ns_;
  AddressOf address_of_;
  std::atomic<int> marked_{0};
  std::jthread thread_;
};

}  // namespace shardscaler::e2e
