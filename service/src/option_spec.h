// The rows of `shardscaler run`'s option table and the value checks they share; private to
// run_options.cc and webhook_options.cc. Nothing here prints or exits: errors are returned.
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/service/run_options.h"

namespace shardscaler::service::detail {

using Applied = std::expected<void, std::string>;

enum class Kind { String, List, Bool, Int, Duration };

// One flag and its config-file key: the parser, the config file and --help all read this row.
template <typename Options>
struct OptionSpec {
  std::string_view flag;      // without the leading "--"
  std::string_view yaml_key;  // "" when the option has no config-file key
  Kind kind;
  std::string_view value_name;  // for --help
  std::string_view default_text;
  std::string_view help;
  Applied (*apply)(Options&, std::string_view);
  // Lists only: empties the list before the first value given on the command line (or in the
  // config file), so that they replace the default instead of adding to it.
  void (*reset)(Options&) = nullptr;
};

using RunSpec = OptionSpec<RunOptions>;
using PlanSpec = OptionSpec<PlanOptions>;

std::string inQuotes(std::string_view s);
std::unexpected<std::string> fail(std::string message);
std::expected<bool, std::string> parseBool(std::string_view v);
std::expected<int, std::string> parseInt(std::string_view v, int min, int max);
Applied checkNamespaceName(std::string_view v);
Applied checkObjectName(std::string_view v);
std::expected<std::chrono::nanoseconds, std::string> parsePositiveDuration(std::string_view v);
// "0" disables the listener (nullopt), as in controller-runtime.
std::expected<std::optional<BindAddress>, std::string> parseListenerFlag(std::string_view v);

// The shard guard's and its HTTPS server's rows (webhook_options.cc).
const std::vector<RunSpec>& webhookRunSpecs();
// The external metrics API's rows (metrics_api_options.cc), and its defaults that depend on the
// pod's namespace and on other options.
const std::vector<RunSpec>& metricsApiRunSpecs();
Applied finishMetricsApiOptions(RunOptions& options, const std::string& pod_namespace);

}  // namespace shardscaler::service::detail
