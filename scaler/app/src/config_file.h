// The --config file of `shardscaler run`: a YAML mapping of the option table's camelCase keys, read
// into the values each key gives. It never applies them: the command line decides which ones win.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "option_spec.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app::detail {

struct ConfigValue {
  const RunSpec* spec;
  std::vector<std::string> values;  // one for a scalar; a list's items, possibly none
};

// Every key's values, each checked as its row checks it. The error names the file and the line:
// `config file /x: line 3: workers: "x" is not a number`.
Expected<std::vector<ConfigValue>> readConfigFile(const std::string& path,
                                                  const std::vector<RunSpec>& specs);
// The same for the file's text; `path` names it in the errors.
Expected<std::vector<ConfigValue>> readConfigText(std::string_view text, const std::string& path,
                                                  const std::vector<RunSpec>& specs);

}  // namespace shardscaler::app::detail
