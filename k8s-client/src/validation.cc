#include "shardscaler/k8s_client/validation.h"

#include <algorithm>

namespace shardscaler::k8s {
namespace {

// Written by hand: these are a few character classes, and std::regex would be slower and no
// clearer than the loops apimachinery's regular expressions stand for.

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool isAlnum(char c) { return isLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// The name part of a label key, and a non-empty label value.
bool isLabelName(std::string_view s) {
  if (s.empty() || s.size() > 63 || !isAlnum(s.front()) || !isAlnum(s.back())) return false;
  return std::ranges::all_of(s,
                             [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, of any length.
bool isDnsPart(std::string_view s) {
  if (s.empty() || !isLowerAlnum(s.front()) || !isLowerAlnum(s.back())) return false;
  return std::ranges::all_of(s, [](char c) { return isLowerAlnum(c) || c == '-'; });
}

}  // namespace

bool isDns1123Label(std::string_view s) { return s.size() <= 63 && isDnsPart(s); }

bool isDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view part =
        s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!isDnsPart(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool isQualifiedName(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return isLabelName(s);
  return isDns1123Subdomain(s.substr(0, slash)) && isLabelName(s.substr(slash + 1));
}

bool isValidLabelValue(std::string_view s) { return s.empty() || isLabelName(s); }

}  // namespace shardscaler::k8s
