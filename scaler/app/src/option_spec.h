// The rows of shardscaler's option tables (one per flag: its config key, help and how its value is
// checked and stored) and the value checks they share. Nothing here prints or exits.
#pragma once

#include <chrono>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app::detail {

using Applied = Expected<void>;
using Check = Applied (*)(std::string_view);

// What a value is: a boolean flag or an option taking a value, and which YAML type the config
// file must give (a quoted "3" is a typing mistake, not a number).
enum class Kind { String, List, Bool, Int, Duration };

// How a row checks and stores one value; made by the functions below.
template <typename Options>
struct OptionTarget {
  Kind kind = Kind::String;
  // A later value overwrites a scalar and adds to a list. The error carries no flag or key.
  std::function<Applied(Options&, std::string_view)> set;
  // Lists only: empties the list before the first value, so that the values given (on the command
  // line or in the config file) replace the default instead of adding to it.
  std::function<void(Options&)> clear;
};

// One flag and its config-file key: the command line, the config file and --help all read this.
template <typename Options>
struct OptionSpec {
  std::string_view flag;        // without the leading "--"
  std::string_view yaml_key;    // "" when the option has no config-file key
  std::string_view value_name;  // for --help; "" for a boolean flag
  std::string_view default_text;
  std::string_view help;
  OptionTarget<Options> target;
};

using RunSpec = OptionSpec<RunOptions>;
using PlanSpec = OptionSpec<PlanOptions>;
using ReleaseSpec = OptionSpec<ReleaseOptions>;

std::string inQuotes(std::string_view s);
std::unexpected<std::string> fail(std::string message);
// ` (did you mean "x"?)` when one candidate is within two edits of `given`, else "".
std::string suggestion(std::string_view given, const std::vector<std::string>& candidates);

Expected<bool> parseBool(std::string_view v);
Expected<int> parseInt(std::string_view v, int min, int max);
Applied checkNamespaceName(std::string_view v);
Applied checkObjectName(std::string_view v);
Applied checkHostName(std::string_view v);  // a DNS name or an IP address
Expected<std::chrono::nanoseconds> parsePositiveDuration(std::string_view v);
// "0" disables the listener (nullopt), as in controller-runtime.
Expected<std::optional<BindAddress>> parseListenerFlag(std::string_view v);
// Adds the comma-separated values of `v` (each checked) that `list` lacks. An empty `v` is an
// error when `empty_error` is set; otherwise it adds nothing, which empties the list.
Applied addToList(std::vector<std::string>& list, std::string_view v, Check check,
                  std::string_view empty_error);
// "[NS/]NAME" (or "NS/NAME" when the namespace is required) into its two parts.
Applied setObjectReference(std::string& ns, std::string& name, std::string_view v,
                           bool namespace_required);

// ---- the targets: what a row stores into, and how its text becomes a value ----

template <typename Options>
OptionTarget<Options> text(std::string Options::*member, Check check = nullptr) {
  return {Kind::String, [member, check](Options& o, std::string_view v) -> Applied {
            if (check != nullptr) {
              if (auto ok = check(v); !ok) return ok;
            }
            o.*member = v;
            return {};
          }};
}

// A value converted by `parse`, whose error is the row's error.
template <typename Options, typename T, typename Parse>
OptionTarget<Options> parsed(Kind kind, T Options::*member, Parse parse) {
  return {kind, [member, parse](Options& o, std::string_view v) -> Applied {
            auto value = parse(v);
            if (!value) return std::unexpected(value.error());
            o.*member = *value;
            return {};
          }};
}

template <typename Options>
OptionTarget<Options> boolean(bool Options::*member) {
  return parsed(Kind::Bool, member, parseBool);
}

template <typename Options>
OptionTarget<Options> number(int Options::*member, int min, int max) {
  return parsed(Kind::Int, member,
                [min, max](std::string_view v) { return parseInt(v, min, max); });
}

template <typename Options>
OptionTarget<Options> duration(std::chrono::nanoseconds Options::*member) {
  return parsed(Kind::Duration, member, parsePositiveDuration);
}

template <typename Options>
OptionTarget<Options> listener(std::optional<BindAddress> Options::*member) {
  return parsed(Kind::String, member, parseListenerFlag);
}

template <typename Options>
OptionTarget<Options> list(std::vector<std::string> Options::*member, Check check,
                           std::string_view empty_error = "") {
  return {Kind::List,
          [member, check, empty_error](Options& o, std::string_view v) {
            return addToList(o.*member, v, check, empty_error);
          },
          [member](Options& o) { (o.*member).clear(); }};
}

template <typename Options>
OptionTarget<Options> objectReference(std::string Options::*ns, std::string Options::*name,
                                      bool namespace_required = false) {
  return {Kind::String, [ns, name, namespace_required](Options& o, std::string_view v) {
            return setObjectReference(o.*ns, o.*name, v, namespace_required);
          }};
}

// The shard guard's and its HTTPS server's rows (webhook_options.cc).
const std::vector<RunSpec>& webhookRunSpecs();
// The external metrics API's rows (metrics_api_options.cc), and its defaults that depend on the
// pod's namespace and on other options.
const std::vector<RunSpec>& metricsApiRunSpecs();
Applied finishMetricsApiOptions(RunOptions& options, const std::string& pod_namespace);

// The ingestion monitor's rows (ingestion_options.cc): which Prometheus URLs it may query.
const std::vector<RunSpec>& ingestionRunSpecs();

// All rows of `run` (run_options.cc), and its defaults and cross-checks once every value is in.
const std::vector<RunSpec>& runSpecs();
const std::vector<PlanSpec>& planSpecs();
const std::vector<ReleaseSpec>& releaseSpecs();
Applied finishRunOptions(RunOptions& options, const OptionsEnvironment& env);

}  // namespace shardscaler::app::detail
