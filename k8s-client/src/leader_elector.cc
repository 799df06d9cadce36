#include "shardscaler/k8s_client/leader_elector.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "shardscaler/base/log.h"
#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::k8s {

namespace {

// client-go's wait.JitterUntil factor for acquire retries.
constexpr double kAcquireJitter = 1.2;

void validate(const LeaderElectionConfig& config) {
  if (config.identity.empty()) throw std::invalid_argument("leader election: identity is empty");
  if (config.lease_name.empty()) {
    throw std::invalid_argument("leader election: lease name is empty");
  }
  if (config.retry_period <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("leader election: retry period must be > 0");
  }
  if (config.lease_duration <= config.renew_deadline) {
    throw std::invalid_argument("leader election: lease duration must exceed renew deadline");
  }
  if (std::chrono::duration<double>(config.renew_deadline) <=
      std::chrono::duration<double>(config.retry_period) * kAcquireJitter) {
    throw std::invalid_argument("leader election: renew deadline must exceed 1.2 x retry period");
  }
}

}  // namespace

LeaderElector::LeaderElector(KubeClient& client, LeaderElectionConfig config, const Clock& clock)
    : client_(client), config_(std::move(config)), clock_(clock) {
  validate(config_);
}

LeaderElector::~LeaderElector() { stop(); }

void LeaderElector::start() {
  std::lock_guard lock(mutex_);
  if (started_ || stop_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool LeaderElector::isLeader() const {
  std::lock_guard lock(mutex_);
  return leading_ && clock_.monotonicNow() - last_renew_ < config_.renew_deadline;
}

std::string LeaderElector::currentLeader() const {
  std::lock_guard lock(mutex_);
  return observed_record_ ? observed_record_->holder_identity : std::string();
}

std::optional<LeaderElectionRecord> LeaderElector::observedRecord() const {
  std::lock_guard lock(mutex_);
  return observed_record_;
}

bool LeaderElector::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

void LeaderElector::run() {
  base::logEvent(base::LogLevel::Info, "leader election started",
                 {{"lease", describe()}, {"identity", config_.identity}});
  bool acquired = false;
  while (!acquired) {
    acquired = tryAcquireOrRenew() == Attempt::Acquired;
    reportTransition();
    if (acquired) break;
    std::uniform_real_distribution<double> spread(0.0, kAcquireJitter);
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double, std::nano>(config_.retry_period) * (1.0 + spread(random_)));
    if (!sleepUntil(clock_.deadlineAfter(wait))) break;
  }

  if (acquired) {
    {
      std::lock_guard lock(mutex_);
      leading_ = true;
      last_renew_ = clock_.monotonicNow();
    }
    base::logEvent(base::LogLevel::Info, "leader acquired",
                   {{"lease", describe()}, {"identity", config_.identity}});
    if (config_.callbacks.on_started_leading) config_.callbacks.on_started_leading();

    while (sleepUntil(clock_.deadlineAfter(config_.retry_period))) {
      auto deadline = clock_.deadlineAfter(config_.renew_deadline);
      Attempt attempt = Attempt::Failed;
      bool stopped = false;
      while (true) {
        attempt = tryAcquireOrRenew();
        reportTransition();
        if (attempt != Attempt::Failed) break;
        auto next = std::min(clock_.deadlineAfter(config_.retry_period), deadline);
        if (!sleepUntil(next)) {
          stopped = true;
          break;
        }
        if (clock_.monotonicNow() >= deadline) break;
      }
      if (stopped) break;
      if (attempt == Attempt::Acquired) {
        std::lock_guard lock(mutex_);
        last_renew_ = clock_.monotonicNow();
        continue;
      }
      base::logEvent(base::LogLevel::Warn, "leader lost",
                     {{"lease", describe()},
                      {"identity", config_.identity},
                      {"reason", attempt == Attempt::HeldByOther ? "held_by_other"
                                                                 : "renew_deadline_passed"}});
      break;
    }
  }

  bool was_leading = false;
  {
    std::lock_guard lock(mutex_);
    was_leading = leading_;
    leading_ = false;
  }
  if (config_.release_on_cancel) release();
  if (was_leading && config_.callbacks.on_stopped_leading) {
    config_.callbacks.on_stopped_leading();
  }
  std::lock_guard lock(mutex_);
  finished_ = true;
}

LeaderElector::Attempt LeaderElector::tryAcquireOrRenew() {
  bool conflict = false;
  auto attempt = tryOnce(conflict);
  // Someone wrote the Lease between our read and write: read it again right away rather
  // than a retry period later.
  if (attempt == Attempt::Failed && conflict) attempt = tryOnce(conflict);
  return attempt;
}

LeaderElector::Attempt LeaderElector::createLease(const LeaderElectionRecord& desired,
                                                  Clock::MonotonicTime now) {
  Json lease{{"apiVersion", "coordination.k8s.io/v1"},
             {"kind", "Lease"},
             {"metadata", {{"name", config_.lease_name}}},
             {"spec", toLeaseSpec(desired)}};
  if (!config_.lease_namespace.empty()) lease["metadata"]["namespace"] = config_.lease_namespace;
  auto created = client_.create(resources::leases(), config_.lease_namespace, lease);
  if (!created) {
    // AlreadyExists: another candidate created it first; the next attempt reads it.
    base::logEvent(base::LogLevel::Warn, "lease create failed",
                   {{"lease", describe()}, {"error", created.error().describe()}});
    return Attempt::Failed;
  }
  std::lock_guard lock(mutex_);
  observed_spec_ = created->value("spec", Json::object());
  observed_record_ = desired;
  observed_time_ = now;
  lease_ = std::move(*created);
  return Attempt::Acquired;
}

LeaderElector::Attempt LeaderElector::tryOnce(bool& conflict) {
  conflict = false;
  auto wall_now = clock_.now();
  auto now = clock_.monotonicNow();
  LeaderElectionRecord desired{
      .holder_identity = config_.identity,
      .lease_duration_seconds = static_cast<int>(
          std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count()),
      .acquire_time = wall_now,
      .renew_time = wall_now,
      .leader_transitions = 0,
  };
  const auto leases = resources::leases();

  auto got = client_.get(leases, config_.lease_namespace, config_.lease_name);
  if (!got) {
    if (got.error().is(ErrorKind::NotFound)) return createLease(desired, now);
    base::logEvent(base::LogLevel::Warn, "lease read failed",
                   {{"lease", describe()}, {"error", got.error().describe()}});
    return Attempt::Failed;
  }

  auto spec = got->value("spec", Json::object());
  auto record = fromLeaseSpec(spec);
  if (!record) {
    base::logEvent(base::LogLevel::Warn, "lease unreadable",
                   {{"lease", describe()}, {"error", record.error().describe()}});
    return Attempt::Failed;
  }
  {
    std::lock_guard lock(mutex_);
    // The expiry clock restarts whenever the record changes (the holder renewed).
    if (spec != observed_spec_) {
      observed_spec_ = spec;
      observed_record_ = *record;
      observed_time_ = now;
    }
    lease_ = *got;
    bool held_by_us = record->holder_identity == config_.identity;
    auto valid_until = observed_time_ + std::chrono::seconds(record->lease_duration_seconds);
    if (!record->holder_identity.empty() && !held_by_us && valid_until > now) {
      return Attempt::HeldByOther;
    }
    if (held_by_us) {
      desired.acquire_time = record->acquire_time;
      desired.leader_transitions = record->leader_transitions;
    } else {
      desired.leader_transitions = record->leader_transitions + 1;
    }
  }

  Json next = std::move(*got);
  next["spec"] = toLeaseSpec(desired);  // metadata.resourceVersion stays: the precondition
  auto updated = client_.update(leases, config_.lease_namespace, next);
  if (!updated) {
    conflict = updated.error().is(ErrorKind::Conflict);
    if (conflict) {
      base::logEvent(base::LogLevel::Info, "lease conflict",
                     {{"lease", describe()}, {"action", "reread"}});
    } else {
      base::logEvent(base::LogLevel::Warn, "lease update failed",
                     {{"lease", describe()}, {"error", updated.error().describe()}});
    }
    return Attempt::Failed;
  }
  std::lock_guard lock(mutex_);
  observed_spec_ = updated->value("spec", Json::object());
  observed_record_ = desired;
  observed_time_ = now;
  lease_ = std::move(*updated);
  return Attempt::Acquired;
}

void LeaderElector::release() {
  Json next;
  {
    std::lock_guard lock(mutex_);
    if (!observed_record_ || observed_record_->holder_identity != config_.identity) return;
    auto now = clock_.now();
    LeaderElectionRecord released{
        .holder_identity = "",
        .lease_duration_seconds = 1,
        .acquire_time = now,
        .renew_time = now,
        .leader_transitions = observed_record_->leader_transitions,
    };
    next = lease_;
    next["spec"] = toLeaseSpec(released);
  }
  auto updated = client_.update(resources::leases(), config_.lease_namespace, next);
  if (!updated) {
    base::logEvent(base::LogLevel::Error, "lease release failed",
                   {{"lease", describe()}, {"error", updated.error().describe()}});
    return;
  }
  base::logEvent(base::LogLevel::Info, "leader released",
                 {{"lease", describe()}, {"identity", config_.identity}});
  std::lock_guard lock(mutex_);
  observed_spec_ = updated->value("spec", Json::object());
  auto record = fromLeaseSpec(observed_spec_);
  if (record) observed_record_ = *record;
  observed_time_ = clock_.monotonicNow();
  lease_ = std::move(*updated);
}

void LeaderElector::reportTransition() {
  auto holder = currentLeader();
  if (holder == reported_leader_) return;
  reported_leader_ = holder;
  if (holder.empty()) return;
  base::logEvent(base::LogLevel::Info, "leader observed",
                 {{"lease", describe()}, {"holder", holder}});
  if (config_.callbacks.on_new_leader) config_.callbacks.on_new_leader(holder);
}

bool LeaderElector::sleepUntil(Clock::MonotonicTime deadline) {
  std::unique_lock lock(mutex_);
  return !clock_.waitUntil(lock, cv_, deadline, [this] { return stop_; });
}

std::string LeaderElector::describe() const {
  return config_.lease_namespace.empty() ? config_.lease_name
                                         : config_.lease_namespace + "/" + config_.lease_name;
}

}  // namespace shardscaler::k8s
