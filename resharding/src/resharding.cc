#include "shardscaler/resharding/resharding.h"

#include <algorithm>

#include "shardscaler/resharding/bucket_table.h"
#include "shardscaler/resharding/hashmod.h"
#include "shardscaler/resharding/scrape_classes.h"

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;

// Names a condition message lists before it counts the rest.
constexpr size_t kListedObjects = 10;

// What the selected objects let the rules cover.
struct Coverage {
  std::vector<std::string> covered;
  std::vector<std::string> not_covered;  // "<object>: <why>"
  std::vector<std::string> refusals;     // why low-churn rules would break an object's sharding
  std::vector<std::string> own_sharding_jobs;
  // Every covered object lists its targets: the table balances those exactly.
  bool exact = false;
  std::vector<std::string> keys;
  bool names_own_class = false;
};

bool hasClass(const Json& classes, const std::string& name) {
  return classes.is_array() && std::ranges::any_of(classes, [&](const Json& c) {
           return c.is_object() && c.value("name", Json()) == name;
         });
}

Coverage cover(const std::vector<ScrapeObject>& objects, const TargetScrapeSpec& target,
               const std::optional<std::string>& user_default) {
  Coverage out;
  bool all_static = true;
  for (const ScrapeObject& o : objects) {
    if (o.scrape_class == kScrapeClassName) out.names_own_class = true;
    const bool gets_rules = !o.scrape_class || *o.scrape_class == kScrapeClassName ||
                            (user_default && *o.scrape_class == *user_default);
    if (!gets_rules) {
      out.not_covered.push_back(
          o.describe() + ": " +
          (hasClass(target.scrape_classes, *o.scrape_class)
               ? "scrape class \"" + *o.scrape_class + "\", the operator's sharding"
               : "names scrape class \"" + *o.scrape_class +
                     "\", which the target does not have: the operator rejects it"));
      continue;
    }
    if (o.kind == ScrapeKind::ScrapeConfig) {
      if (o.own_hashmod && o.overrides_job) {
        out.refusals.push_back(
            o.describe() +
            " shards itself with a hashmod rule and sets `job` in its static labels, so its "
            "targets cannot be told apart to leave them to its own rules");
        continue;
      }
      if (o.own_hashmod) {
        out.own_sharding_jobs.push_back(o.job());
        out.not_covered.push_back(o.describe() +
                                  ": shards itself (a hashmod rule), its own rules apply as "
                                  "without shardscaler");
        continue;
      }
      if (o.sets_hash || o.sets_disable_sharding) {
        out.refusals.push_back(
            o.describe() + " sets " +
            (o.sets_hash ? std::string(kHashLabel) : std::string(kDisableShardingLabel)) +
            " in its relabelings; they run after the scrape class, and the operator adds no "
            "sharding rules to a ScrapeConfig after a hashmod rule, so that rule would lose its "
            "effect: give it a scrape class of its own (spec.scrapeClass) to keep the operator's "
            "sharding for it");
        continue;
      }
    } else if (o.sets_hash) {
      out.not_covered.push_back(o.describe() + ": sets " + std::string(kHashLabel) +
                                " itself, the operator shards it by that key");
      continue;
    } else if (o.sets_disable_sharding) {
      out.not_covered.push_back(o.describe() + ": sets " + std::string(kDisableShardingLabel) +
                                ", its rule applies as written");
      continue;
    }
    out.covered.push_back(o.describe());
    all_static = all_static && o.static_only;
    out.keys.insert(out.keys.end(), o.static_keys.begin(), o.static_keys.end());
  }
  if (target.additional_scrape_configs) {
    out.not_covered.emplace_back(
        "spec.additionalScrapeConfigs: no scrape class reaches them, the operator's sharding");
  }
  out.exact = all_static && !out.covered.empty() && !out.keys.empty();
  std::ranges::sort(out.own_sharding_jobs);
  return out;
}

std::vector<double> weightsOf(const Coverage& coverage, int32_t buckets) {
  std::vector<double> w(static_cast<size_t>(buckets), coverage.exact ? 0.0 : 1.0);
  if (!coverage.exact) return w;
  for (const std::string& key : coverage.keys) {
    w[hashmod(key, static_cast<uint64_t>(buckets))] += 1.0;
  }
  return w;
}

std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < kListedObjects; ++i) {
    out += (i == 0 ? "" : "; ") + items[i];
  }
  if (items.size() > kListedObjects) {
    out += "; and " + std::to_string(items.size() - kListedObjects) + " more";
  }
  return out;
}

std::string placement(const std::optional<std::string>& user_default) {
  return "scrape class \"" + std::string(kScrapeClassName) + "\"" +
         (user_default ? " and the default scrape class \"" + *user_default + "\""
                       : " (the default)");
}

std::string activeText(const LowChurnRules& rules, const std::optional<std::string>& user_default) {
  return "targets go to " + std::to_string(rules.table.shards) + " shards through a table of " +
         std::to_string(rules.table.buckets()) + " buckets in " + placement(user_default);
}

std::string coverageText(const Coverage& c) {
  std::string out =
      c.covered.empty()
          ? "; covered: no object yet (the rules reach every selected object without a scrape "
            "class of its own)"
          : "; covered (" + std::to_string(c.covered.size()) + "): " + listed(c.covered);
  if (!c.covered.empty()) {
    out += c.exact ? " (balanced on their static targets)"
                   : " (balanced on bucket counts: some targets are discovered)";
  }
  if (!c.not_covered.empty()) {
    out += "; not covered (" + std::to_string(c.not_covered.size()) + "): " + listed(c.not_covered);
  }
  return out;
}

// What planResharding reads of its input once.
struct Context {
  const ReshardingInput& in;
  const Json& classes;
  bool carries;  // the target carries shardscaler's rules
  Expected<LowChurnRules> current;
};

// The operator's sharding, with `reason` and `message`; shardscaler's rules leave, said once.
ReshardingOutcome restoreOperatorSharding(const Context& c, ReshardingOutcome out,
                                          std::string_view reason, std::string message,
                                          const std::string& why) {
  out.condition = false;
  out.reason = std::string(reason);
  out.message = std::move(message);
  out.summary = "resharding: the operator's (" + out.reason + ")";
  if (!c.carries) return out;
  const bool named = !c.in.objects || std::ranges::any_of(*c.in.objects, [](const ScrapeObject& o) {
    return o.scrape_class == kScrapeClassName;
  });
  Json desired = withoutRules(c.classes, named);
  if (desired == c.classes) return out;
  out.scrape_classes = std::move(desired);
  out.summary += ", removing shardscaler's scrape-class rules";
  out.events.push_back(
      {false, std::string(kEventLowChurnDisabled),
       "low-churn re-sharding off (" + why +
           "): the operator's hashmod sharding applies again, and most targets move to another "
           "shard once, now (about (N-1)/N of them for N shards)" +
           (named ? "; scrape class \"" + std::string(kScrapeClassName) +
                        "\" stays, empty, for the objects that name it"
                  : "")});
  return out;
}

// The cases where shardscaler's rules do not apply, or nullopt.
std::optional<ReshardingOutcome> operatorShardingCase(const Context& c,
                                                      const ReshardingOutcome& out) {
  if (c.in.release) {
    return restoreOperatorSharding(c, out, kReasonOperatorSharding,
                                   "the ShardSet let go of its target",
                                   "the ShardSet let go of its target");
  }
  if (c.in.mode == Mode::Operator) {
    return restoreOperatorSharding(
        c, out, kReasonOperatorSharding,
        "spec.resharding is Operator: the operator's hashmod sharding; a scale step moves "
        "about N/(N+1) of the targets",
        "spec.resharding is Operator");
  }
  if (c.in.target.topology) {
    return restoreOperatorSharding(
        c, out, kReasonTopologySharding,
        "spec.resharding LowChurn is not applied: the target shards by topology "
        "(spec.shardingStrategy.mode Topology), which keeps each target in its zone's shards "
        "first; the operator's sharding applies",
        "the target shards by topology");
  }
  return std::nullopt;
}

// A plan without the scrape objects: the rules in force, as last written from a read of the
// objects, follow the shard count; with none (or none readable), it waits for the objects.
ReshardingOutcome planWithoutObjects(const Context& c, ReshardingOutcome out,
                                     const std::optional<std::string>& user_default) {
  const ReshardingInput& in = c.in;
  if (!c.current) {
    out.needs_objects = true;
    out.condition = false;
    out.reason = std::string(kReasonScrapeObjectsUnread);
    out.message =
        "spec.resharding LowChurn is not applied yet: the scrape objects the target "
        "selects were not read" +
        (in.objects_error.empty() ? "" : " (" + in.objects_error + ")");
    out.summary = "resharding: LowChurn, waiting to read the scrape objects";
    return out;
  }
  const std::vector<double> alike(static_cast<size_t>(c.current->table.buckets()), 1.0);
  LowChurnRules rules = makeRules(rescale(c.current->table, in.shards, alike),
                                  c.current->own_sharding_jobs, c.current->shard_values);
  Json desired = withRules(c.classes, toRelabelings(rules), user_default);
  if (desired != c.classes) {
    out.scrape_classes = std::move(desired);
    out.needs_objects = true;
  }
  out.condition = true;
  out.reason = std::string(kReasonLowChurn);
  out.message = in.previous_reason == kReasonLowChurn && !out.scrape_classes
                    ? in.previous_message
                    : activeText(rules, user_default) + "; coverage as last read" +
                          (in.objects_error.empty() ? "" : " (" + in.objects_error + ")");
  out.summary = "resharding: LowChurn, " + std::to_string(rules.table.shards) + " shards" +
                (out.scrape_classes ? ", writing the table" : "");
  out.rules = std::move(rules);
  return out;
}

// A plan from the scrape objects the target selects: the table rebalanced over what they cover.
ReshardingOutcome planWithObjects(const Context& c, ReshardingOutcome out,
                                  const std::optional<std::string>& user_default) {
  const ReshardingInput& in = c.in;
  const Coverage coverage = cover(*in.objects, in.target, user_default);
  if (!coverage.refusals.empty()) {
    return restoreOperatorSharding(
        c, std::move(out), kReasonOwnShardingRules,
        "spec.resharding LowChurn is not applied: " + listed(coverage.refusals),
        "a selected ScrapeConfig shards itself");
  }
  const int32_t buckets = c.current ? c.current->table.buckets() : bucketCount(in.max_shards);
  const BucketTable from = c.current ? c.current->table : moduloTable(buckets, in.current_shards);
  LowChurnRules rules =
      makeRules(rescale(from, in.shards, weightsOf(coverage, buckets)), coverage.own_sharding_jobs,
                c.current ? c.current->shard_values : std::vector<std::string>{});
  Json desired = withRules(c.classes, toRelabelings(rules), user_default);
  if (desired != c.classes) out.scrape_classes = std::move(desired);
  if (!c.carries) {
    const bool free = buckets % in.current_shards == 0;
    out.events.push_back(
        {false, std::string(kEventLowChurnEnabled),
         "low-churn re-sharding on: " + activeText(rules, user_default) +
             "; a step from N to N+1 shards (or back) now moves about 1/(N+1) of the covered "
             "targets" +
             (free ? "; switching moved none: the table starts as the operator's own assignment"
                   : "; switching moves targets once")});
  } else if (!c.current) {
    out.events.push_back({true, std::string(kEventLowChurnRulesReset),
                          "shardscaler's rules on the target could not be read back (" +
                              c.current.error() +
                              "): a new table starts from the operator's own assignment"});
  }
  out.condition = true;
  out.reason = std::string(kReasonLowChurn);
  out.message = activeText(rules, user_default) + coverageText(coverage);
  out.summary = "resharding: LowChurn, " + std::to_string(rules.table.shards) + " shards" +
                (out.scrape_classes ? ", writing the table" : "");
  out.rules = std::move(rules);
  return out;
}

}  // namespace

ReshardingOutcome planResharding(const ReshardingInput& in) {
  const Json& classes = in.target.scrape_classes;
  const bool carries = carriesOwnRules(classes);
  const Context c{
      in, classes, carries,
      carries ? parseRules(ownRules(classes)) : Expected<LowChurnRules>(std::unexpected("none"))};
  ReshardingOutcome out;
  out.relevant = in.mode == Mode::LowChurn || carries || !in.previous_reason.empty();
  if (auto done = operatorShardingCase(c, out)) return std::move(*done);

  const std::vector<std::string> defaults = userDefaultClasses(classes);
  if (defaults.size() > 1) {
    out.condition = false;
    out.reason = std::string(kReasonMultipleDefaultClasses);
    out.message = "scrape classes \"" + defaults[0] + "\" and \"" + defaults[1] +
                  "\" are both the default, which the operator refuses; shardscaler changes "
                  "nothing until one is left";
    out.summary = "resharding: waiting for one default scrape class";
    return out;
  }
  const std::optional<std::string> user_default =
      defaults.empty() ? std::nullopt : std::optional(defaults.front());
  // Enabling, or replacing unreadable rules, needs to know what the target selects.
  if (!in.objects) return planWithoutObjects(c, std::move(out), user_default);
  return planWithObjects(c, std::move(out), user_default);
}

}  // namespace shardscaler::resharding
