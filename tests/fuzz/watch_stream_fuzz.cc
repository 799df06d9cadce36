// libFuzzer target: watch response bodies, split into events wherever the network cut the
// chunks. The first byte chooses the chunk size; the same events must come out either way. The
// same text through the projecting decoder the caches use (FieldMask) must give exactly what the
// whole DOM gives once the mask is applied to it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/watch_stream.h"

namespace {

struct Decoded {
  std::vector<std::string> events;  // type and object, as text
  bool failed = false;
};

Decoded decode(std::string_view stream, std::size_t chunk) {
  shardscaler::k8s::WatchStreamDecoder decoder;
  Decoded out;
  for (std::size_t at = 0; at < stream.size() && !out.failed; at += chunk) {
    auto fed = decoder.feed(stream.substr(at, chunk), [&](shardscaler::k8s::WatchEvent&& e) {
      out.events.push_back(std::to_string(static_cast<int>(e.type)) + e.object.dump());
      return true;
    });
    out.failed = !fed.has_value();
  }
  return out;
}

// What the StatefulSet cache keeps, in the shape of a watch event.
const shardscaler::k8s::FieldMask& eventMask() {
  using shardscaler::k8s::FieldMask;
  static const FieldMask mask =
      FieldMask::keepAll().put({"object"}, FieldMask::keepNone()
                                               .keep({"metadata", "name"})
                                               .keep({"metadata", "labels"})
                                               .keep({"metadata", "resourceVersion"})
                                               .keep({"spec", "replicas"}));
  return mask;
}

void checkProjection(std::string_view text) {
  auto whole = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto projected = shardscaler::k8s::parseProjected(text, eventMask());
  if (whole.is_discarded()) return;  // (the projecting parser may fail too, or not: both fine)
  if (!projected) std::abort();
  eventMask().apply(whole);
  if (whole != *projected) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 16;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)shardscaler::k8s::decodeWatchEvent(stream);
  checkProjection(stream);
  const Decoded whole = decode(stream, std::max<std::size_t>(stream.size(), 1));
  const Decoded cut = decode(stream, chunk);
  // Where the chunks are cut never changes the events decoded before the first error.
  const std::size_t common = std::min(whole.events.size(), cut.events.size());
  if (!std::equal(whole.events.begin(), whole.events.begin() + static_cast<std::ptrdiff_t>(common),
                  cut.events.begin())) {
    std::abort();
  }
  if (!whole.failed && !cut.failed && whole.events.size() != cut.events.size()) std::abort();
  return 0;
}
