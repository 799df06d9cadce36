// The emulator's record of what it did, one JSON object per line, for tests to assert on: every
// write (create/update/patch/delete) with its outcome, each finished reconcile ("sync"), and
// "ready" once the caches are synced. It only appends to its file; it never reads it back.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::emulator {

struct Action {
  std::string verb;  // create | update | patch | delete | sync | ready
  std::string kind;  // StatefulSet | Secret | Service | Prometheus | PrometheusAgent
  std::string ns;
  std::string name;
  std::optional<int> shard;             // StatefulSets of a target
  std::string subresource;              // "status" for status writes
  std::string owner;                    // "<Kind>/<name>" of the target the write is for
  std::string reason;                   // why the emulator did it
  std::string outcome;                  // "ok", "paused", or "error: <what the server said>"
  std::optional<long long> generation;  // the target's metadata.generation (sync records)
  // A write an admission webhook refused: the webhook that denied it, or that could not be
  // called (failurePolicy Fail). Empty otherwise.
  std::string denied_by;
  std::string webhook_failed;
};

class ActionLog {
 public:
  // An empty path logs nothing. Throws std::system_error if the file cannot be opened.
  explicit ActionLog(const std::string& path);
  ~ActionLog();
  ActionLog(const ActionLog&) = delete;
  ActionLog& operator=(const ActionLog&) = delete;

  // Appends one line with a single write(2), so readers never see two records interleaved.
  void record(const Action& action);

 private:
  std::mutex mutex_;
  int fd_ = -1;
};

}  // namespace shardscaler::emulator
