// libFuzzer target: the shard guard's decision, as its webhook makes it: an AdmissionReview (sent
// by the API server, but the port is reachable from the pod network), judged against the live
// ShardSet, target and namespace, which users wrote. Input parts (fuzz_input.h): the review, then
// what each read answers: JSON is the object found, "" absent, anything else a failed read.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/guard/admission_review.h"
#include "shardscaler/guard/decision.h"
#include "shardscaler/guard/guard_config.h"
#include "shardscaler/guard/live_objects.h"

namespace {

using shardscaler::guard::LiveRead;

LiveRead readOf(std::string_view part) {
  if (part.empty()) return LiveRead::absent();
  nlohmann::json object = shardscaler::fuzz::json(part);
  if (object.is_discarded()) return LiveRead::failed("injected read failure");
  return LiveRead::found(std::move(object));
}

class FuzzLiveObjects final : public shardscaler::guard::LiveObjects {
 public:
  FuzzLiveObjects(std::string_view shard_set, std::string_view target, std::string_view ns)
      : shard_set_(shard_set), target_(target), ns_(ns) {}
  LiveRead shardSet(const std::string&, const std::string&) override { return readOf(shard_set_); }
  LiveRead target(const std::string&, shardscaler::planner::TargetKind,
                  const std::string&) override {
    return readOf(target_);
  }
  LiveRead namespaceObject(const std::string&) override { return readOf(ns_); }

 private:
  std::string_view shard_set_;
  std::string_view target_;
  std::string_view ns_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto p = shardscaler::fuzz::parts(shardscaler::fuzz::text(data, size), 4);
  auto request = shardscaler::guard::decodeAdmissionReview(p[0]);
  if (!request) return 0;
  FuzzLiveObjects live(p[1], p[2], p[3]);
  static const shardscaler::guard::GuardConfig config = [] {
    shardscaler::guard::GuardConfig c;
    c.self_user = "system:serviceaccount:monitoring:shardscaler";
    c.exempt_users = {"admin"};
    return c;
  }();
  // 2026-06-01T00:00:00Z: deadlines in the seeds lie on both sides of it.
  const std::chrono::system_clock::time_point now{std::chrono::seconds(1780272000)};
  const auto verdict = shardscaler::guard::decide(*request, live, now, config);
  // A denial always says why, and its answer is what the webhook sends.
  if (!verdict.allowed && verdict.message.empty()) __builtin_trap();
  (void)shardscaler::guard::encodeAdmissionResponse(request->uid,
                                                    {verdict.allowed, verdict.message});
  return 0;
}
