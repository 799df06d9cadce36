#include "lagged_view.h"

#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

namespace shardscaler::emulator {

namespace {

// A throwing handler must not stop the delay line nor skip the other handlers.
template <typename F>
void guarded(const char* what, const k8s::ObjectPtr& object, F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    spdlog::error("event=lagged_view_handler_threw handler={} object={} error=\"{}\"", what,
                  object ? k8s::objectKey(*object) : std::string(), e.what());
  }
}

}  // namespace

LaggedView::LaggedView(std::chrono::milliseconds lag, const k8s::Clock& clock,
                       std::function<bool()> source_synced, std::size_t capacity)
    : lag_(lag < std::chrono::milliseconds::zero() ? std::chrono::milliseconds::zero() : lag),
      clock_(clock),
      source_synced_(std::move(source_synced)),
      capacity_(capacity == 0 ? 1 : capacity) {}

LaggedView::~LaggedView() { stop(); }

k8s::EventHandlers LaggedView::sourceHandlers() {
  // An update is an upsert: the old object handed to this view's handlers is the one this
  // view held, which is the informer's old object seen `lag` later.
  return k8s::EventHandlers{
      .on_add = [this](const k8s::ObjectPtr& o) { receive(EventType::Upsert, o); },
      .on_update = [this](const k8s::ObjectPtr&,
                          const k8s::ObjectPtr& o) { receive(EventType::Upsert, o); },
      .on_delete = [this](const k8s::ObjectPtr& o) { receive(EventType::Delete, o); },
  };
}

void LaggedView::addEventHandlers(k8s::EventHandlers handlers) {
  std::lock_guard dispatch(dispatch_mutex_);
  if (handlers.on_add) {
    for (const auto& object : store_.list()) {
      guarded("add", object, [&] { handlers.on_add(object); });
    }
  }
  handlers_.push_back(std::move(handlers));
}

void LaggedView::start() {
  std::lock_guard lock(queue_mutex_);
  if (started_ || stopping_ || lag_.count() == 0) return;
  started_ = true;
  timer_ = std::thread([this] { timerLoop(); });
}

void LaggedView::stop() {
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

bool LaggedView::hasSynced() const {
  std::lock_guard lock(queue_mutex_);
  if (!source_synced_seen_) {
    if (!source_synced_()) return false;
    // The informer ran the handlers of its first list before it reported synced, so every
    // event of that list is counted in received_ by now.
    source_synced_seen_ = true;
    sync_mark_ = received_;
  }
  return applied_ >= sync_mark_;
}

std::uint64_t LaggedView::received() const {
  std::lock_guard lock(queue_mutex_);
  return received_;
}

std::uint64_t LaggedView::applied() const {
  std::lock_guard lock(queue_mutex_);
  return applied_;
}

void LaggedView::receive(EventType type, const k8s::ObjectPtr& object) {
  if (lag_.count() == 0) {
    {
      std::lock_guard lock(queue_mutex_);
      ++received_;
    }
    apply(Pending{.type = type, .object = object, .due = clock_.monotonicNow()});
    return;
  }
  std::unique_lock lock(queue_mutex_);
  if (queue_.size() >= capacity_ && !warned_full_) {
    warned_full_ = true;
    spdlog::warn(
        "event=lagged_view_full capacity={} lag_ms={} action=\"the informer waits for room, so "
        "the lag grows beyond the one asked for\"",
        capacity_, lag_.count());
  }
  // Room appears within `lag` (the timer applies the oldest event by then), or on stop.
  clock_.waitUntil(lock, queue_cv_, k8s::Clock::MonotonicTime::max(),
                   [this] { return stopping_ || queue_.size() < capacity_; });
  if (stopping_) return;
  ++received_;
  queue_.push_back(Pending{.type = type, .object = object, .due = clock_.deadlineAfter(lag_)});
  lock.unlock();
  queue_cv_.notify_all();
}

void LaggedView::apply(const Pending& event) {
  std::lock_guard dispatch(dispatch_mutex_);
  k8s::ObjectPtr previous;
  bool changed = true;
  if (event.type == EventType::Delete) {
    // Nothing to tell if the view never had it, as the informer does.
    changed = store_.erase(k8s::objectKey(*event.object)) != nullptr;
  } else {
    previous = store_.upsert(event.object);
  }
  {
    // Counted as soon as the store shows it, before the handlers run (as Informer's synced).
    std::lock_guard lock(queue_mutex_);
    ++applied_;
  }
  queue_cv_.notify_all();  // a producer waiting for room
  if (!changed) return;
  for (const auto& handlers : handlers_) {
    if (event.type == EventType::Delete) {
      if (handlers.on_delete) {
        guarded("delete", event.object, [&] { handlers.on_delete(event.object); });
      }
    } else if (previous) {
      if (handlers.on_update) {
        guarded("update", event.object, [&] { handlers.on_update(previous, event.object); });
      }
    } else if (handlers.on_add) {
      guarded("add", event.object, [&] { handlers.on_add(event.object); });
    }
  }
}

void LaggedView::timerLoop() {
  std::unique_lock lock(queue_mutex_);
  while (!stopping_) {
    const std::uint64_t seen = received_;
    const auto deadline = queue_.empty() ? k8s::Clock::MonotonicTime::max() : queue_.front().due;
    // Wakes for stop, for the oldest event's due time, or for a new event (whose due time a
    // wait on an empty queue did not know).
    clock_.waitUntil(lock, queue_cv_, deadline, [&] {
      return stopping_ || received_ != seen ||
             (!queue_.empty() && queue_.front().due <= clock_.monotonicNow());
    });
    std::vector<Pending> due;
    const auto now = clock_.monotonicNow();
    while (!stopping_ && !queue_.empty() && queue_.front().due <= now) {
      due.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    if (due.empty()) continue;
    lock.unlock();
    for (const auto& event : due) apply(event);
    lock.lock();
  }
}

}  // namespace shardscaler::emulator
