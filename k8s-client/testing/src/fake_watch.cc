// The FakeKubeClient's watch: the history of changes replayed from a resourceVersion (410 Gone
// from before a compaction), then followed, in bounded steps so that a stop is seen soon; and the
// test's bookmarks and ends of the open watches.
#include <algorithm>
#include <charconv>
#include <deque>
#include <string_view>

#include "shardscaler/k8s_testing/fake_kube_client.h"

#include "fake_objects.h"

namespace shardscaler::k8s::testing {

using detail::Selection;

Result<void> FakeKubeClient::watch(const Resource& r, const std::string& ns,
                                   const WatchOptions& opts, const WatchHandler& handler,
                                   const std::atomic<bool>* stop) {
  std::size_t seq = 0;
  if (auto e = begin({.verb = Verb::Watch,
                      .resource = r,
                      .ns = ns,
                      .label_selector = opts.label_selector,
                      .watch_options = opts},
                     &seq)) {
    return std::unexpected(*e);
  }
  auto selection =
      Selection::make(r.namespaced ? ns : "", opts.label_selector, opts.field_selector);
  if (!selection) return failed(seq, selection.error());
  std::int64_t from = 0;
  const std::string& rv = opts.resource_version;
  if (!rv.empty() && rv != "0") {
    // The server reads its own versions, opaque or not.
    const std::string_view digits = std::string_view(rv).substr(rv.starts_with("rv-") ? 3 : 0);
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), from);
    if (ec != std::errc() || p != digits.data() + digits.size()) {
      return failed(seq, statusError(400, "invalid resourceVersion \"" + rv + "\""));
    }
  }
  const std::string resource = r.describe();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(std::max(1, opts.timeout_seconds));
  std::unique_lock lock(mutex_);
  if (from != 0 && from < compacted_) {
    lock.unlock();
    return failed(seq, statusError(410, "too old resource version: " + rv + " (" +
                                            std::to_string(compacted_) + ")"));
  }
  const std::uint64_t ends_before = watch_ends_;
  // No resourceVersion: the current objects first, as ADDED events (as the API server does).
  std::deque<WatchEvent> initial;
  std::size_t pos = history_.size();
  if (rv.empty() || rv == "0") {
    for (const auto& [key, object] : objects_) {
      if (std::get<0>(key) == resource && selection->matches(object)) {
        initial.push_back(
            {WatchEventType::Added, detail::served(object, opts.metadata_only, opts.fields.get())});
      }
    }
  } else {
    pos = 0;
    while (pos < history_.size() && history_[pos].rv <= from) ++pos;
  }
  const std::uint64_t id = next_watch_++;
  watch_positions_[id] = initial.empty() ? pos : 0;
  struct Close {
    FakeKubeClient* self;
    std::uint64_t id;
    ~Close() {
      self->watch_positions_.erase(id);
      self->held_watches_.erase(id);
      self->changed_.notify_all();
    }
  } close{this, id};  // runs with the lock held (declared after it)
  auto deliver = [&](WatchEvent event) {
    lock.unlock();
    const bool more = handler(std::move(event));
    lock.lock();
    return more;
  };
  while (!initial.empty()) {
    WatchEvent event = std::move(initial.front());
    initial.pop_front();
    if (!deliver(std::move(event))) return {};
  }
  watch_positions_[id] = pos;
  changed_.notify_all();
  while (true) {
    bool lagging = false;
    while (pos < history_.size() && !watches_stopped_ && watch_ends_ == ends_before) {
      if (auto held = held_after_.find(resource); held != held_after_.end() &&
                                                  history_[pos].resource == resource &&
                                                  history_[pos].rv > held->second) {
        lagging = true;
        break;
      }
      const Entry& entry = history_[pos++];
      const bool bookmark = entry.type == WatchEventType::Bookmark;
      if (entry.resource != resource ||
          !(bookmark ? opts.allow_bookmarks : selection->matches(entry.object))) {
        watch_positions_[id] = pos;
        continue;
      }
      WatchEvent event{entry.type, bookmark ? entry.object
                                            : detail::served(entry.object, opts.metadata_only,
                                                             opts.fields.get())};
      if (!deliver(std::move(event))) return {};
      watch_positions_[id] = pos;
      changed_.notify_all();
    }
    // Held back: it has handed out all it will until released.
    if (lagging) {
      held_watches_[id] = resource;
    } else {
      held_watches_.erase(id);
    }
    changed_.notify_all();
    if (watch_ends_ != ends_before) {
      if (!watch_end_error_) return {};
      noteFailureLocked(seq, *watch_end_error_);
      return std::unexpected(*watch_end_error_);
    }
    if (watches_stopped_ || (stop != nullptr && stop->load())) return {};
    if (std::chrono::steady_clock::now() >= deadline) return {};  // the server's watch timeout
    // Bounded steps, so that a stop flag (which nobody notifies us of) is seen soon.
    changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

void FakeKubeClient::compact() {
  std::lock_guard lock(mutex_);
  compacted_ = rv_;
}

void FakeKubeClient::bookmark(const Resource& r) {
  std::lock_guard lock(mutex_);
  // As the API server sends it: only metadata.resourceVersion says anything.
  Json object{{"apiVersion", r.group.empty() ? r.version : r.group + "/" + r.version},
              {"metadata", {{"resourceVersion", versionText(rv_)}}}};
  history_.push_back(Entry{r.describe(), WatchEventType::Bookmark, rv_, std::move(object)});
  changed_.notify_all();
}

void FakeKubeClient::holdWatches(const Resource& r) {
  std::lock_guard lock(mutex_);
  held_after_.emplace(r.describe(), rv_);
}

void FakeKubeClient::releaseWatches(const Resource& r) {
  std::lock_guard lock(mutex_);
  held_after_.erase(r.describe());
  std::erase_if(held_watches_, [&](const auto& w) { return w.second == r.describe(); });
  changed_.notify_all();
}

void FakeKubeClient::endWatches(std::optional<Error> error) {
  std::lock_guard lock(mutex_);
  ++watch_ends_;
  watch_end_error_ = std::move(error);
  changed_.notify_all();
}

}  // namespace shardscaler::k8s::testing
