#include "shardscaler/app/signals.h"

#include <unistd.h>

#include <csignal>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

namespace shardscaler::app {

// asio's signal_set records the signal in an async-signal-safe way (a self-pipe) and delivers it
// to a handler on this class's own thread.
class StopSignal::Impl {
 public:
  explicit Impl(StopSignal& owner) : owner_(owner), signals_(ioc_, SIGTERM, SIGINT) {
    arm();
    thread_ = std::thread([this] { ioc_.run(); });
  }

  ~Impl() {
    ioc_.stop();
    thread_.join();
  }

 private:
  void arm() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
      if (ec) return;
      if (++signals_seen_ > 1 && owner_.options_.exit_on_second_signal) {
        static constexpr char kMessage[] = "shardscaler: second signal, exiting now\n";
        [[maybe_unused]] auto n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
        std::_Exit(1);
      }
      owner_.stop(signal);
      arm();
    });
  }

  StopSignal& owner_;
  boost::asio::io_context ioc_{1};
  boost::asio::signal_set signals_;
  int signals_seen_ = 0;  // this thread only
  std::thread thread_;
};

StopSignal::StopSignal() : StopSignal(Options{}) {}

StopSignal::StopSignal(Options options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(*this)) {}

StopSignal::~StopSignal() { impl_.reset(); }

void StopSignal::stop(int signal) {
  {
    std::lock_guard lock(mutex_);
    if (claimed_) return;
    claimed_ = true;
    signal_ = signal;
  }
  // Callbacks first, so a woken waiter finds every component already told to stop.
  source_.request_stop();
  if (options_.on_stop) options_.on_stop(signal);
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  cv_.notify_all();
}

bool StopSignal::stopRequested() const {
  std::lock_guard lock(mutex_);
  return stopped_;
}

int StopSignal::signalNumber() const {
  std::lock_guard lock(mutex_);
  return signal_;
}

void StopSignal::requestStop() { stop(0); }

void StopSignal::wait() const {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return stopped_; });
}

bool StopSignal::waitFor(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [this] { return stopped_; });
}

std::stop_token StopSignal::token() const { return source_.get_token(); }

}  // namespace shardscaler::app
