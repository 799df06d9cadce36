#include "shardscaler/resharding/scrape_classes.h"

#include "shardscaler/resharding/low_churn_rules.h"

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;

Json stripped(const Json& relabelings) {
  Json out = Json::array();
  if (!relabelings.is_array()) return out;
  for (const Json& rule : relabelings) {
    if (!isOwnRule(rule)) out.push_back(rule);
  }
  return out;
}

bool holdsOwnRule(const Json& scrape_class) {
  auto it = scrape_class.find("relabelings");
  if (it == scrape_class.end() || !it->is_array()) return false;
  for (const Json& rule : *it) {
    if (isOwnRule(rule)) return true;
  }
  return false;
}

// The class with shardscaler's rules removed (and its relabelings field, when they were all it
// held); a class without any is returned as it is.
Json classWithout(const Json& scrape_class) {
  if (!scrape_class.is_object() || !holdsOwnRule(scrape_class)) return scrape_class;
  Json out = scrape_class;
  if (auto it = out.find("relabelings"); it != out.end()) {
    Json rest = stripped(*it);
    if (rest.empty()) {
      out.erase("relabelings");
    } else {
      *it = std::move(rest);
    }
  }
  return out;
}

}  // namespace

bool isOwnClass(const Json& scrape_class) {
  return scrape_class.is_object() && scrape_class.value("name", Json()) == kScrapeClassName;
}

bool isDefaultClass(const Json& scrape_class) {
  return scrape_class.is_object() && scrape_class.value("default", Json()) == true;
}

std::vector<std::string> userDefaultClasses(const Json& classes) {
  std::vector<std::string> out;
  if (!classes.is_array()) return out;
  for (const Json& c : classes) {
    if (!isOwnClass(c) && isDefaultClass(c) && c.value("name", Json()).is_string()) {
      out.push_back(c["name"].get<std::string>());
    }
  }
  return out;
}

Json ownRules(const Json& classes) {
  Json out = Json::array();
  if (!classes.is_array()) return out;
  const Json* holder = nullptr;
  for (const Json& c : classes) {
    if (isOwnClass(c) && holdsOwnRule(c)) holder = &c;
  }
  for (const Json& c : classes) {
    if (holder == nullptr && c.is_object() && holdsOwnRule(c)) holder = &c;
  }
  if (holder == nullptr) return out;
  for (const Json& rule : (*holder)["relabelings"]) {
    if (isOwnRule(rule)) out.push_back(rule);
  }
  return out;
}

bool carriesOwnRules(const Json& classes) {
  if (!classes.is_array()) return false;
  for (const Json& c : classes) {
    if (isOwnClass(c) || (c.is_object() && holdsOwnRule(c))) return true;
  }
  return false;
}

Json withRules(const Json& classes, const Json& rules,
               const std::optional<std::string>& user_default) {
  Json own{{"name", std::string(kScrapeClassName)}};
  if (!user_default) own["default"] = true;
  own["relabelings"] = rules;
  Json out = Json::array();
  bool placed = false;
  if (classes.is_array()) {
    for (const Json& c : classes) {
      if (isOwnClass(c)) {
        if (!placed) out.push_back(own);
        placed = true;
        continue;
      }
      Json kept = classWithout(c);
      if (user_default && c.is_object() && c.value("name", Json()) == *user_default) {
        Json relabelings = kept.value("relabelings", Json::array());
        for (const Json& rule : rules) relabelings.push_back(rule);
        kept["relabelings"] = std::move(relabelings);
      }
      out.push_back(std::move(kept));
    }
  }
  if (!placed) out.push_back(std::move(own));
  return out;
}

Json withoutRules(const Json& classes, bool keep_own_class) {
  Json out = Json::array();
  if (classes.is_array()) {
    for (const Json& c : classes) {
      if (isOwnClass(c)) {
        if (keep_own_class) out.push_back(Json{{"name", std::string(kScrapeClassName)}});
        continue;
      }
      out.push_back(classWithout(c));
    }
  }
  return out.empty() ? Json() : out;
}

}  // namespace shardscaler::resharding
