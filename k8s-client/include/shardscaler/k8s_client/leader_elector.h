// Leader election on a coordination.k8s.io/v1 Lease, as client-go's tools/leaderelection does
// it: acquire, renew, observe others, release. It never writes any object but its Lease.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/leader_election_record.h"

namespace shardscaler::k8s {

// Called on the elector's thread; must return quickly (start/stop workers elsewhere).
struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  // Only after on_started_leading: leadership was lost or stop() gave it up (after the
  // release, when one is made).
  std::function<void()> on_stopped_leading;
  // Whenever the observed holder changes to a non-empty identity, this client included.
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per process, e.g. the pod name
  std::chrono::nanoseconds lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period = std::chrono::seconds(2);
  // On stop() (and on loss, as client-go), a leader writes holderIdentity "" with
  // leaseDurationSeconds 1, so another candidate takes over at its next retry instead of
  // waiting out the lease. Stop the work the lease guards before calling stop().
  bool release_on_cancel = true;
  LeaderCallbacks callbacks;
};

// Every attempt reads the Lease and writes it back with the resourceVersion it read, so two
// candidates never both win; a 409 Conflict re-reads once at once. A Lease held by someone
// else counts as expired once its record has not changed for its leaseDurationSeconds, as
// measured on this client's monotonic clock (no trust in other clocks).
// Timing as client-go: acquire retries every retry_period (jittered by up to 1.2x); a leader
// renews every retry_period and gives up when a renewal has not succeeded within
// renew_deadline. Unlike client-go, a leader that sees another holder steps down at once.
//
// Thread-safety: all methods from any thread. start() once; stop() joins the elector's
// thread (it may be called from a callback, then it only asks the thread to end).
class LeaderElector {
 public:
  // Throws std::invalid_argument unless lease_duration > renew_deadline > 1.2 * retry_period
  // > 0 and identity and lease_name are set.
  LeaderElector(KubeClient& client, LeaderElectionConfig config, const Clock& clock);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  void start();
  void stop();

  // Leading, and the last successful renewal is younger than renew_deadline.
  bool isLeader() const;
  // The holder last observed on the Lease; "" when none (or not yet read).
  std::string currentLeader() const;
  std::optional<LeaderElectionRecord> observedRecord() const;
  // The elector's thread has ended (after stop(), or after leadership was lost).
  bool finished() const;

 private:
  enum class Attempt { Acquired, HeldByOther, Failed };
  void run();
  Attempt tryAcquireOrRenew();
  Attempt tryOnce(bool& conflict);
  // No Lease yet: create it, held by this candidate.
  Attempt createLease(const LeaderElectionRecord& desired, Clock::MonotonicTime now);
  void release();
  void reportTransition();
  // Waits until the deadline or stop(); false if stopped.
  bool sleepUntil(Clock::MonotonicTime deadline);
  std::string describe() const;

  KubeClient& client_;
  LeaderElectionConfig config_;
  const Clock& clock_;
  std::mt19937 random_{std::random_device{}()};  // elector thread only
  std::string reported_leader_;                  // elector thread only

  mutable std::mutex mutex_;  // guards everything below; wait mutex of cv_
  std::condition_variable cv_;
  bool stop_ = false;
  bool started_ = false;
  bool finished_ = false;
  bool leading_ = false;
  Clock::MonotonicTime last_renew_{};
  Json lease_;  // last Lease read or written: its resourceVersion guards the next write
  std::optional<LeaderElectionRecord> observed_record_;
  Json observed_spec_;
  Clock::MonotonicTime observed_time_{};
  std::thread thread_;
};

}  // namespace shardscaler::k8s
