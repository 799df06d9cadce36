// libFuzzer target: label selectors as HPAs and users write them: the labelSelector parameter of
// an external metrics request (percent-decoded as the metrics API reads its query string) and a
// metav1.LabelSelector object. Input parts (fuzz_input.h): the query string, the selector
// object (JSON), and labels to match ("key=value" lines).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/k8s_client/label_selector.h"
#include "shardscaler/metrics_api/api_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fuzz = shardscaler::fuzz;
  const auto p = fuzz::parts(fuzz::text(data, size), 3);
  shardscaler::k8s::Labels labels;
  for (std::string_view line : fuzz::lines(p[2])) {
    const std::size_t eq = line.find('=');
    labels[std::string(line.substr(0, eq))] =
        eq == std::string_view::npos ? std::string() : std::string(line.substr(eq + 1));
  }
  const std::string text =
      shardscaler::metrics_api::queryParameter(p[0], "labelSelector").value_or(std::string(p[0]));
  if (auto selector = shardscaler::k8s::LabelSelector::parse(text)) {
    (void)selector->matches(labels);
    (void)selector->pinnedValue("shardset");
    // What parse() accepted, it accepts again the same way from its own text.
    auto again = shardscaler::k8s::LabelSelector::parse(selector->text());
    if (!again || again->requirements() != selector->requirements()) __builtin_trap();
  }
  const nlohmann::json object = fuzz::json(p[1]);
  if (!object.is_discarded()) {
    if (auto selector = shardscaler::k8s::LabelSelector::fromObject(object)) {
      (void)selector->matches(labels);
      (void)selector->pinnedValue("shardset");
    }
  }
  return 0;
}
