// Starts the operator-emulator program (the Prometheus Operator stand-in  of docs/design.md section
// 7) as a child process for tests, stops it, and reads its action log. The child never outlives the
// test process; nothing here talks to the API server itself.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/test_kit/temp_dir.h"

namespace shardscaler::testenv {

// One line of the action log. verb is create | update | patch | delete for writes, "sync" when
// a reconcile finished (outcome ok | paused | not-found | deleting | error: ...), "ready" once
// the emulator handles events.
struct EmulatorAction {
  std::string time;  // RFC 3339 UTC with microseconds
  std::string verb;
  std::string kind;  // StatefulSet | Secret | Service | Prometheus | PrometheusAgent
  std::string ns;
  std::string name;
  std::optional<int> shard;
  std::string subresource;  // "status" for status writes
  std::string owner;        // "<Kind>/<name>" of the target
  std::string reason;
  std::string outcome;  // "ok" or "error: ..." for writes
  std::optional<long long> generation;
  // A write an admission webhook refused: the webhook that denied it ("admission webhook ...
  // denied the request"), or that could not be called. Empty otherwise.
  std::string denied_by;
  std::string webhook_failed;
  nlohmann::json raw;

  bool isWrite() const {
    return verb == "create" || verb == "update" || verb == "patch" || verb == "delete";
  }
  bool ok() const { return outcome == "ok"; }
  bool deniedByWebhook() const { return !denied_by.empty(); }
};

// Parses every complete line (a line still being written is skipped). Missing file: empty.
// Throws std::runtime_error for a line that is not an action record.
std::vector<EmulatorAction> readActionLog(const std::filesystem::path& path);

struct OperatorEmulatorOptions {
  std::filesystem::path kubeconfig;     // required
  std::vector<std::string> namespaces;  // empty: all
  // Holds action.log and emulator.log (stderr+stdout). Empty: a fresh directory under
  // ${TMPDIR:-/tmp}, removed on destruction unless keepWorkDir() was called.
  std::filesystem::path work_dir;
  int workers = 1;
  // --resync-period; the emulator's default (5m) when unset.
  std::optional<std::chrono::milliseconds> resync_period;
  // --statefulset-lag / --target-lag (0..2 s): the emulator's caches trail the API server.
  std::chrono::milliseconds statefulset_lag{0};
  std::chrono::milliseconds target_lag{0};
  // --sync-latency / --sync-latency-jitter / --seed: each sync holds this long (plus a seeded
  // random 0..jitter) between reading the target and acting on it.
  std::chrono::milliseconds sync_latency{0};
  std::chrono::milliseconds sync_latency_jitter{0};
  std::uint64_t seed = 1;
  std::vector<std::string> extra_args;
  std::chrono::seconds start_timeout{60};  // until the "ready" record
};

class OperatorEmulator {
 public:
  // Starts the binary and waits for its "ready" record. Throws std::runtime_error with the tail
  // of its log if it exits or is not ready in time. Call it from the main thread: the child gets
  // PR_SET_PDEATHSIG(SIGKILL), which fires when the forking thread exits.
  explicit OperatorEmulator(OperatorEmulatorOptions options);
  ~OperatorEmulator();  // stop()
  OperatorEmulator(const OperatorEmulator&) = delete;
  OperatorEmulator& operator=(const OperatorEmulator&) = delete;

  // SIGTERM, waits up to `grace`, then SIGKILL. Returns the wait status (see exitedCleanly).
  // Idempotent: later calls return the first status.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(15));
  static bool exitedCleanly(int wait_status);  // exited with code 0

  pid_t pid() const { return pid_; }
  bool running();
  const std::filesystem::path& actionLogPath() const { return action_log_; }
  const std::filesystem::path& logPath() const { return log_file_; }
  void keepWorkDir();  // leaves the work directory it made on disk (a given one always stays)
  std::string logTail(std::size_t max_bytes = 4000) const;

  std::vector<EmulatorAction> actions() const { return readActionLog(action_log_); }
  // Polls the action log every 50 ms until some record satisfies `match`; false on timeout.
  bool waitForAction(std::chrono::milliseconds timeout,
                     const std::function<bool(const EmulatorAction&)>& match) const;

 private:
  std::optional<test_kit::TempDir> owned_work_dir_;  // when options.work_dir is empty
  std::filesystem::path work_dir_;
  std::filesystem::path action_log_;
  std::filesystem::path log_file_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Path of the operator-emulator binary this library was built with.
std::filesystem::path operatorEmulatorBinary();

// The configuration text in a config Secret's data (base64 of gzip), as the operator stores it.
std::string decodeConfigSecretData(const std::string& base64_gzip);

}  // namespace shardscaler::testenv
