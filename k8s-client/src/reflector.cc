#include "shardscaler/k8s_client/reflector.h"

#include <algorithm>
#include <random>
#include <utility>

#include "shardscaler/base/log.h"

namespace shardscaler::k8s {

namespace {

// A watch that ends this soon with nothing delivered did not really run.
constexpr auto kShortWatch = std::chrono::seconds(1);

// A list's resourceVersion for "whatever the API server has in memory".
constexpr std::string_view kAnyVersion = "0";

bool resumable(const Error& error) {
  switch (error.kind) {
    case ErrorKind::Transport:
    case ErrorKind::Timeout:
    case ErrorKind::ServerError:
    case ErrorKind::TooManyRequests:
      return true;
    default:
      return false;
  }
}

}  // namespace

Reflector::Reflector(KubeClient& client, Resource resource, ReflectorOptions options,
                     ReflectorSink& sink, const Clock& clock)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      sink_(sink),
      clock_(clock),
      backoff_(options_.backoff, clock) {}

void Reflector::run() {
  bool need_list = true;
  int gone_in_a_row = 0;
  while (!stop_.load()) {
    if (need_list) {
      if (!listAndReplace()) {
        if (!backoffWait()) break;
        continue;
      }
      need_list = false;
    }
    std::uint64_t events = 0;
    std::chrono::nanoseconds wait_at_least{};
    auto started = clock_.monotonicNow();
    auto end = watchOnce(events, wait_at_least);
    if (end == WatchEnd::Stopped || stop_.load()) break;
    if (events > 0) gone_in_a_row = 0;
    bool short_and_empty = events == 0 && clock_.monotonicNow() - started < kShortWatch;
    switch (end) {
      case WatchEnd::Closed:
        if (short_and_empty && !backoffWait(wait_at_least)) return;
        break;
      case WatchEnd::Gone:
        need_list = true;
        if (++gone_in_a_row > 1 && !backoffWait()) return;
        break;
      case WatchEnd::Resumable:
        if (!backoffWait(wait_at_least)) return;
        break;
      case WatchEnd::NeedsRelist:
        need_list = true;
        if (!backoffWait(wait_at_least)) return;
        break;
      case WatchEnd::Stopped:
        return;
    }
  }
}

void Reflector::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
  }
  cv_.notify_all();
}

bool Reflector::listAndReplace() {
  ListOptions opts;
  opts.label_selector = options_.label_selector;
  opts.field_selector = options_.field_selector;
  opts.metadata_only = options_.metadata_only;
  opts.fields = options_.fields;
  if (options_.page_size > 0) opts.limit = options_.page_size;
  // The first list takes any version the API server's watch cache holds, as client-go's
  // reflector does: one walk over memory instead of pages read from etcd. A relist (the watch
  // broke or its history is gone) reads the newest state, so it never goes back in time.
  const bool first = stats().lists == 0;
  if (first) opts.resource_version = std::string(kAnyVersion);
  auto listed = listAll(client_, resource_, options_.ns, opts);
  if (!listed) {
    {
      std::lock_guard lock(mutex_);
      ++stats_.list_errors;
    }
    logEvent(base::LogLevel::Warn, "list failed",
             {{"error", listed.error().describe()}, {"action", "backoff"}});
    return false;
  }
  std::vector<ObjectPtr> objects;
  if (auto items = listed->find("items"); items != listed->end() && items->is_array()) {
    objects.reserve(items->size());
    for (auto& item : *items) {
      if (options_.transform) options_.transform(item);
      objects.push_back(std::make_shared<const Json>(std::move(item)));
    }
  }
  auto rv = resourceVersionOf(*listed);
  // The version never runs ahead of the store: a relist sets it once the store holds the list.
  // Nothing reads a store before its first list is in (hasSynced), so that list's version is set
  // first: a synced store always has its version.
  if (first) setResourceVersion(rv);
  sink_.onReplace(std::move(objects), rv);
  if (!first) setResourceVersion(std::move(rv));
  {
    std::lock_guard lock(mutex_);
    ++stats_.lists;
  }
  synced_.store(true);
  return true;
}

Reflector::WatchEnd Reflector::watchOnce(std::uint64_t& events,
                                         std::chrono::nanoseconds& wait_at_least) {
  WatchOptions opts;
  opts.label_selector = options_.label_selector;
  opts.field_selector = options_.field_selector;
  opts.resource_version = lastSyncResourceVersion();
  opts.allow_bookmarks = true;
  opts.metadata_only = options_.metadata_only;
  opts.fields = options_.fields;
  auto min_timeout = static_cast<int>(options_.min_watch_timeout.count());
  opts.timeout_seconds =
      min_timeout + std::uniform_int_distribution<int>(0, std::max(0, min_timeout - 1))(random_);
  {
    std::lock_guard lock(mutex_);
    ++stats_.watches;
  }
  WatchEnd end = WatchEnd::Closed;
  auto result = client_.watch(
      resource_, options_.ns, opts,
      [&](WatchEvent&& event) { return handleEvent(std::move(event), events, end); }, &stop_);
  if (stop_.load()) return WatchEnd::Stopped;
  if (!result) {
    const auto& error = result.error();
    if (error.is(ErrorKind::Gone)) {
      end = WatchEnd::Gone;
    } else {
      end = resumable(error) ? WatchEnd::Resumable : WatchEnd::NeedsRelist;
    }
    // 429 with Retry-After: the server said how long; never come back sooner.
    if (error.retry_after) wait_at_least = *error.retry_after;
  }
  if (end == WatchEnd::Gone) {
    {
      std::lock_guard lock(mutex_);
      ++stats_.watch_gone;
    }
    logEvent(base::LogLevel::Info, "watch expired",
             {{"resource_version", opts.resource_version}, {"action", "relist"}});
    if (options_.on_watch_restart) options_.on_watch_restart("gone");
  } else if (end != WatchEnd::Closed) {
    {
      std::lock_guard lock(mutex_);
      ++stats_.watch_errors;
    }
    logEvent(base::LogLevel::Warn, "watch failed",
             {{"resource_version", lastSyncResourceVersion()},
              {"error", result ? std::string("error event") : result.error().describe()},
              {"action", end == WatchEnd::Resumable ? "backoff_resume" : "backoff_relist"}});
    if (options_.on_watch_restart) options_.on_watch_restart("error");
  }
  return end;
}

bool Reflector::handleEvent(WatchEvent&& event, std::uint64_t& events, WatchEnd& end) {
  switch (event.type) {
    case WatchEventType::Bookmark: {
      auto rv = resourceVersionOf(event.object);
      if (!rv.empty()) setResourceVersion(std::move(rv));
      std::lock_guard lock(mutex_);
      ++stats_.bookmarks;
      ++events;
      return !stop_.load();
    }
    case WatchEventType::Error: {
      // The client maps a 410 to Error::Gone itself; accept the raw Status too.
      bool gone = event.object.is_object() && (event.object.value("code", 0) == 410 ||
                                               event.object.value("reason", "") == "Expired");
      end = gone ? WatchEnd::Gone : WatchEnd::NeedsRelist;
      if (!gone) {
        logEvent(base::LogLevel::Warn, "watch error event",
                 {{"status", event.object.is_object()
                                 ? event.object.value("message", event.object.dump())
                                 : event.object.dump()}});
      }
      return false;
    }
    case WatchEventType::Added:
    case WatchEventType::Modified:
    case WatchEventType::Deleted: {
      if (!event.object.is_object()) {
        logEvent(base::LogLevel::Warn, "watch event malformed", {{"action", "relist"}});
        end = WatchEnd::NeedsRelist;
        return false;
      }
      if (options_.transform) options_.transform(event.object);
      auto rv = resourceVersionOf(event.object);
      sink_.onEvent(event.type, std::make_shared<const Json>(std::move(event.object)));
      // Only after the sink has it: a resume must never skip an event not yet applied.
      if (!rv.empty()) setResourceVersion(std::move(rv));
      {
        std::lock_guard lock(mutex_);
        ++stats_.events;
      }
      ++events;
      return !stop_.load();
    }
  }
  return true;
}

bool Reflector::backoffWait(std::chrono::nanoseconds at_least) {
  auto delay = std::max(backoff_.next(), at_least);
  std::unique_lock lock(mutex_);
  clock_.waitUntil(lock, cv_, clock_.deadlineAfter(delay), [this] { return stop_.load(); });
  return !stop_.load();
}

void Reflector::setResourceVersion(std::string rv) {
  std::lock_guard lock(mutex_);
  resource_version_ = std::move(rv);
}

std::string Reflector::lastSyncResourceVersion() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

ReflectorStats Reflector::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Reflector::logEvent(base::LogLevel level, std::string_view msg,
                         std::initializer_list<base::LogField> more) const {
  std::vector<base::LogField> fields{{"resource", resource_.describe()}};
  if (!options_.ns.empty()) fields.emplace_back("namespace", options_.ns);
  if (!options_.label_selector.empty()) fields.emplace_back("selector", options_.label_selector);
  fields.insert(fields.end(), more);
  base::logEvent(level, msg, fields);
}

}  // namespace shardscaler::k8s
