// Where shardscaler's relabelings live in a target's spec.scrapeClasses: in a scrape class of its
// own (kScrapeClassName), the default unless the user has a default class, in which case they are
// also appended to that class. Pure list edits: every other class, and every rule that is not
// shardscaler's, is kept as written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscaler::resharding {

// Whether each class is shardscaler's and whether it is a default (`default: true`).
bool isOwnClass(const nlohmann::json& scrape_class);
bool isDefaultClass(const nlohmann::json& scrape_class);

// The names of the default classes that are not shardscaler's, in list order.
std::vector<std::string> userDefaultClasses(const nlohmann::json& classes);

// shardscaler's rules as the target carries them: those of its own class when it has any, else
// those in the first class that holds some (a user's default); [] when none.
nlohmann::json ownRules(const nlohmann::json& classes);
// Any class holds one of shardscaler's rules, or shardscaler's class is there.
bool carriesOwnRules(const nlohmann::json& classes);

// The list with `rules` in place: shardscaler's class (appended when missing) holds exactly them,
// and is the default unless `user_default` names the user's default class, to whose relabelings
// they are then appended; every other class loses any rule of shardscaler's.
nlohmann::json withRules(const nlohmann::json& classes, const nlohmann::json& rules,
                         const std::optional<std::string>& user_default);

// The list without any rule of shardscaler's; its class goes too, unless `keep_own_class` (an
// object names it: the operator would refuse that object without it), then it stays empty and not
// the default. null when nothing is left.
nlohmann::json withoutRules(const nlohmann::json& classes, bool keep_own_class);

}  // namespace shardscaler::resharding
