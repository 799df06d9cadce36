// The emulated operator's view of one informer as it is under load: every event the informer
// delivers reaches this view's store and handlers a fixed lag later, in order. It never drops,
// reorders or invents an event, and never talks to the API server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/store.h"

namespace shardscaler::emulator {

// A delay line between an Informer and the code that reads it. The informer's handlers
// (sourceHandlers()) stamp each event with the time it arrived; a timer thread applies it to
// this view's Store `lag` later and only then calls this view's handlers, one event at a time,
// in arrival order. With lag 0 an event is applied at once on the informer's thread (no timer
// thread), which is exactly the informer's own behaviour.
//
// Thread-safety: every method may be called from any thread. Handlers run one at a time with
// the store already showing the change; they must not call stop().
class LaggedView {
 public:
  // `source_synced` tells whether the informer feeding this view has synced (its first list
  // delivered); `capacity` bounds the events in flight (the informer waits for room beyond it).
  LaggedView(std::chrono::milliseconds lag, const k8s::Clock& clock,
             std::function<bool()> source_synced, std::size_t capacity = kDefaultCapacity);
  ~LaggedView();  // stop()
  LaggedView(const LaggedView&) = delete;
  LaggedView& operator=(const LaggedView&) = delete;

  static constexpr std::size_t kDefaultCapacity = 100000;

  // The handlers to register on the informer, before it starts so that its first list passes
  // through the view too.
  k8s::EventHandlers sourceHandlers();
  // As Informer::addEventHandlers: on_add for every object the view holds now, then the
  // lagged stream, nothing missed or repeated.
  void addEventHandlers(k8s::EventHandlers handlers);

  // Starts the timer thread (not needed, and not started, for lag 0). Idempotent.
  void start();
  // Stops the timer thread; events still in flight are dropped. Idempotent.
  void stop();

  // True once the source has synced and every event it delivered before this call first saw
  // it synced is visible here: the view's first list is complete.
  bool hasSynced() const;

  const k8s::Store& store() const { return store_; }
  std::chrono::milliseconds lag() const { return lag_; }
  // Events received from the informer, and applied to this view, so far.
  std::uint64_t received() const;
  std::uint64_t applied() const;

 private:
  enum class EventType { Upsert, Delete };
  struct Pending {
    EventType type;
    k8s::ObjectPtr object;
    k8s::Clock::MonotonicTime due;
  };

  void receive(EventType type, const k8s::ObjectPtr& object);
  void apply(const Pending& event);
  void timerLoop();

  const std::chrono::milliseconds lag_;
  const k8s::Clock& clock_;
  const std::function<bool()> source_synced_;
  const std::size_t capacity_;
  k8s::Store store_;

  // Held while the store changes and handlers run (as Informer's dispatch mutex).
  std::mutex dispatch_mutex_;
  std::vector<k8s::EventHandlers> handlers_;

  mutable std::mutex queue_mutex_;  // guards everything below; wait mutex of queue_cv_
  std::condition_variable queue_cv_;
  std::deque<Pending> queue_;
  std::uint64_t received_ = 0;
  std::uint64_t applied_ = 0;
  mutable std::uint64_t sync_mark_ = 0;
  mutable bool source_synced_seen_ = false;
  bool warned_full_ = false;
  bool started_ = false;
  bool stopping_ = false;
  std::thread timer_;
};

}  // namespace shardscaler::emulator
