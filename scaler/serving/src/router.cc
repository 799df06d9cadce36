#include "router.h"

namespace shardscaler::serving::detail {

void Router::add(std::string method, std::string path, bool prefix, Handler handler,
                 std::size_t max_body_bytes) {
  routes_.push_back(
      {std::move(method), std::move(path), prefix, std::move(handler), max_body_bytes});
}

Router::Match Router::find(std::string_view method, std::string_view path) const {
  // The best route for the path regardless of method decides 404 against 405: an exact path
  // beats any prefix, a longer prefix beats a shorter one.
  const auto strength = [&](const Route& route) -> std::size_t {
    if (!route.prefix) return route.path == path ? SIZE_MAX : 0;
    return path.starts_with(route.path) ? route.path.size() + 1 : 0;
  };
  std::size_t best = 0;
  for (const auto& route : routes_) best = std::max(best, strength(route));
  Match match;
  if (best == 0) return match;
  for (const auto& route : routes_) {
    if (strength(route) != best) continue;
    if (route.method == "*" || route.method == method ||
        (method == "HEAD" && route.method == "GET")) {
      match.handler = &route.handler;
      match.route = route.path;
      match.allowed.clear();
      match.max_body_bytes = route.max_body_bytes;
      return match;
    }
    match.allowed += (match.allowed.empty() ? "" : ", ") + route.method;
    if (route.method == "GET") match.allowed += ", HEAD";
  }
  return match;
}

}  // namespace shardscaler::serving::detail
