// Decodes a list response (an object whose "items" is an array of objects) as its bytes arrive,
// wherever the chunks were cut: each item is decoded on its own as soon as its last byte comes,
// so the raw body is never held whole. An unpaged list from the API server's watch cache
// (resourceVersion=0) is the namespace's every object in one body, tens of MB for thousands of
// StatefulSets; kept whole before decoding it would cost more than the cache it fills. It only
// decodes; it never does I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/json_strings.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {

class ListStreamDecoder {
 public:
  // item_fields: each item keeps only these fields (see parseProjected); nullptr: whole items.
  // The decoder keeps the pointer: the mask must outlive it.
  explicit ListStreamDecoder(const FieldMask* item_fields);

  // Consumes bytes. An item that is not JSON fails (Decode), and so does every later call.
  Result<void> feed(std::string_view bytes);

  // The list: its members other than "items" decoded from the bytes kept for them, and "items"
  // the items decoded on the way. A body without a top-level "items" array (an error Status, a
  // server that answered something else) was kept whole and is decoded here, with the same
  // result as decoding it whole with item_fields under "items".
  Result<Json> finish();

  // The bytes kept besides the items: the whole body when it had no "items" array. For the
  // message of a response that is not a 2xx.
  const std::string& rest() const { return rest_; }

 private:
  void scanRest(std::string_view bytes, std::size_t& i);
  Result<void> scanBetweenItems(std::string_view bytes, std::size_t& i);
  Result<void> scanItem(std::string_view bytes, std::size_t& i);
  Result<void> decodeItem();

  const FieldMask* item_fields_;
  std::string rest_;  // every byte outside the items, "items":[] in place of the array
  std::string item_;  // the item being assembled
  Json items_ = Json::array();
  std::string error_;  // set once feed failed
  int depth_ = 0;      // nesting of {} and [] outside strings; 2 between items, > 2 in one
  JsonStringTracker strings_;
  bool in_items_ = false;       // inside the top-level "items" array
  bool comma_ = false;          // a comma came after the last item: the next must be an item
  bool items_seen_ = false;     // the array was found (only the first one is streamed)
  bool top_is_object_ = false;  // the body is an object (only then has it members)
  bool key_next_ = false;       // the next string at depth 1 is a member name
  bool in_key_ = false;         // inside that name
  std::string key_;             // the last member name at depth 1, as written (escapes not decoded)
};

}  // namespace shardscaler::k8s
