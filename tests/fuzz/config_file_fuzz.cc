// libFuzzer target: the --config file of `shardscaler run` (YAML, hand-edited or templated by
// deployment tools), read into the option table's values, applied as the command line applies
// them, and finished with the defaults that depend on other options.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config_file.h"
#include "fuzz_input.h"
#include "option_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace app = shardscaler::app;
  const auto& specs = app::detail::runSpecs();
  auto values =
      app::detail::readConfigText(shardscaler::fuzz::text(data, size), "fuzz.yaml", specs);
  if (!values) return 0;
  app::RunOptions options;
  for (const app::detail::ConfigValue& value : *values) {
    if (value.spec->target.clear) value.spec->target.clear(options);
    for (const std::string& v : value.values) {
      // readConfigText checked each value against its row already.
      if (!value.spec->target.set(options, v)) __builtin_trap();
    }
  }
  app::OptionsEnvironment env;
  env.pod_namespace = "monitoring";
  env.default_identity = "fuzz_1";
  (void)app::detail::finishRunOptions(options, env);
  return 0;
}
