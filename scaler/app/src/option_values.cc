// The value checks the option rows share (option_spec.h); messages carry no flag or key, which the
// command line or the config file puts in front.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "option_spec.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_client/validation.h"

namespace shardscaler::app::detail {
namespace {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string lowered(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool isIpAddress(const std::string& s) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, s.c_str(), buffer) == 1 || inet_pton(AF_INET6, s.c_str(), buffer) == 1;
}

}  // namespace

std::string inQuotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::unexpected<std::string> fail(std::string message) {
  return std::unexpected(std::move(message));
}

// CLI11 reports an unknown flag or key without a guess; kubectl and pflag users expect one.
std::string suggestion(std::string_view given, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;
  const std::string lower_given = lowered(given);
  for (const auto& c : candidates) {
    const std::string lower_c = lowered(c);
    const size_t d = lower_given == lower_c ? 0 : editDistance(lower_given, lower_c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best.empty() ? "" : " (did you mean " + inQuotes(best) + "?)";
}

Expected<bool> parseBool(std::string_view v) {
  // strconv.ParseBool, which pflag uses.
  static constexpr std::array<std::string_view, 6> kTrue = {"1", "t", "T", "true", "TRUE", "True"};
  static constexpr std::array<std::string_view, 6> kFalse = {"0",     "f",     "F",
                                                             "false", "FALSE", "False"};
  if (std::ranges::find(kTrue, v) != kTrue.end()) return true;
  if (std::ranges::find(kFalse, v) != kFalse.end()) return false;
  return fail(inQuotes(v) + " is not a boolean (true or false)");
}

Expected<int> parseInt(std::string_view v, int min, int max) {
  int out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || end != v.data() + v.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    return fail(inQuotes(v) + " is not a number");
  }
  if (ec == std::errc::result_out_of_range || out < min || out > max) {
    return fail("must be between " + std::to_string(min) + " and " + std::to_string(max) +
                ", got " + std::string(v));
  }
  return out;
}

Applied checkNamespaceName(std::string_view v) {
  if (k8s::isDns1123Label(v)) return {};
  return fail(inQuotes(v) +
              " is not a valid namespace name (lowercase letters, digits and '-', at most 63)");
}

Applied checkObjectName(std::string_view v) {
  if (k8s::isDns1123Subdomain(v)) return {};
  return fail(inQuotes(v) +
              " is not a valid object name (lowercase letters, digits, '-' and '.', at most 253)");
}

Applied checkHostName(std::string_view v) {
  if (isIpAddress(std::string(v)) || k8s::isDns1123Subdomain(v)) return {};
  return fail(inQuotes(v) + " is neither a DNS name nor an IP address");
}

Expected<std::chrono::nanoseconds> parsePositiveDuration(std::string_view v) {
  auto d = parseGoDuration(v);
  if (!d) return std::unexpected(d.error());
  if (d->count() <= 0) return fail("must be greater than 0, got " + inQuotes(v));
  return *d;
}

Expected<std::optional<BindAddress>> parseListenerFlag(std::string_view v) {
  if (v == "0") return std::optional<BindAddress>{};  // controller-runtime: "0" disables it
  auto a = parseBindAddress(v);
  if (!a) return std::unexpected(a.error());
  return std::optional<BindAddress>{*a};
}

Applied addToList(std::vector<std::string>& list, std::string_view v, Check check,
                  std::string_view empty_error) {
  if (v.empty()) {
    if (!empty_error.empty()) return fail(std::string(empty_error));
    return {};  // "--guard-exempt-groups=" is how a list is emptied
  }
  size_t start = 0;
  while (start <= v.size()) {
    const size_t comma = std::min(v.find(',', start), v.size());
    const std::string_view item = v.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) return fail("empty entry in " + inQuotes(v));
    if (check != nullptr) {
      if (auto ok = check(item); !ok) return ok;
    }
    if (std::ranges::find(list, item) == list.end()) list.emplace_back(item);
  }
  return {};
}

Applied setObjectReference(std::string& ns, std::string& name, std::string_view v,
                           bool namespace_required) {
  const size_t slash = v.find('/');
  if (slash == std::string_view::npos && namespace_required) {
    return fail(inQuotes(v) + " must be NAMESPACE/NAME");
  }
  const std::string_view name_part = slash == std::string_view::npos ? v : v.substr(slash + 1);
  if (slash != std::string_view::npos) {
    if (auto ok = checkNamespaceName(v.substr(0, slash)); !ok) return ok;
  }
  if (auto ok = checkObjectName(name_part); !ok) return ok;
  if (slash != std::string_view::npos) ns = v.substr(0, slash);
  name = name_part;
  return {};
}

}  // namespace shardscaler::app::detail
