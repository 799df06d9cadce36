// SIGTERM and SIGINT as a stop request that main and the service wait on or poll.
// Must never run service code inside a signal handler: callbacks run on an ordinary thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>

namespace shardscaler::app {

class StopSignal {
 public:
  struct Options {
    // controller-runtime's rule: a second signal means "now", exit(1) without cleanup.
    bool exit_on_second_signal = true;
    // Called once when a stop is first requested, with the signal number (on the signal
    // thread) or 0 (on the thread calling requestStop()).
    std::function<void(int signal)> on_stop;
  };

  // Installs the SIGTERM/SIGINT handlers until destruction (they are then reset to the default).
  StopSignal();
  explicit StopSignal(Options options);
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // True once the stop callbacks (on_stop, the token's) have run.
  bool stopRequested() const;
  // The signal that asked for the stop; 0 before any, or when requestStop() did.
  int signalNumber() const;
  // Same effect as a signal, for a component that fails for good.
  void requestStop();

  void wait() const;
  // True when a stop was requested within `timeout`.
  bool waitFor(std::chrono::nanoseconds timeout) const;
  // Fires with the stop; for std::stop_callback and std::jthread-style loops.
  std::stop_token token() const;

 private:
  void stop(int signal);

  class Impl;
  Options options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  int signal_ = 0;
  bool claimed_ = false;  // a stop is being delivered (callbacks run once)
  bool stopped_ = false;  // ... and delivered: waiters may go
  std::stop_source source_;
  std::unique_ptr<Impl> impl_;  // last: its thread calls stop() until it is joined
};

}  // namespace shardscaler::app
