// libFuzzer target: list response bodies, decoded item by item as the network cut them into
// chunks (ListStreamDecoder). The first byte chooses the chunk size. Where the chunks are cut
// never changes the result, and a body that decodes so is JSON and gives exactly what decoding
// it whole with the same mask gives.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/list_stream.h"

namespace {

using shardscaler::k8s::FieldMask;
using shardscaler::k8s::ListStreamDecoder;

// What the StatefulSet cache keeps of each item.
const FieldMask& itemMask() {
  static const FieldMask mask = FieldMask::keepNone()
                                    .keep({"metadata", "name"})
                                    .keep({"metadata", "labels"})
                                    .keep({"metadata", "resourceVersion"});
  return mask;
}

// The result as text, or "" when decoding failed.
std::string decode(std::string_view body, std::size_t chunk) {
  ListStreamDecoder decoder(&itemMask());
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    if (!decoder.feed(body.substr(at, chunk))) return {};
  }
  auto list = decoder.finish();
  return list ? list->dump() : std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 16;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (body.empty()) return 0;
  const std::string whole = decode(body, body.size());
  if (decode(body, chunk) != whole) std::abort();
  if (whole.empty()) return 0;
  // Decoded, so the body is JSON. With a second "items" member the two may keep different ones.
  if (body.find("items") != body.rfind("items")) return 0;
  auto parsed =
      shardscaler::k8s::parseProjected(body, FieldMask::keepAll().put({"items"}, itemMask()));
  if (!parsed || parsed->dump() != whole) std::abort();
  return 0;
}
