// Splits a watch response body into events as its bytes arrive, wherever the chunks were cut
// (mid-object, mid-string, mid-UTF-8). It only decodes; it never does I/O or retries.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/json_strings.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {

// One watch event from its JSON text ({"type":"ADDED","object":{...}}). With `object_fields`,
// the object of an ADDED, MODIFIED or DELETED event keeps only those fields (decoded without a
// DOM of the rest); BOOKMARK and ERROR objects are always decoded whole.
Result<WatchEvent> decodeWatchEvent(std::string_view json_text,
                                    const FieldMask* object_fields = nullptr);

class WatchStreamDecoder {
 public:
  // Returns false to stop decoding.
  using Sink = std::function<bool(WatchEvent&&)>;

  // object_fields: see decodeWatchEvent; nullptr decodes whole objects.
  explicit WatchStreamDecoder(std::shared_ptr<const FieldMask> object_fields = nullptr);

  // Consumes bytes; calls sink for each event completed by them. Returns true when every
  // event went to the sink, false when the sink asked to stop, or an error (Decode) for a
  // stream that is not a sequence of JSON objects. After an error the decoder is unusable.
  Result<bool> feed(std::string_view bytes, const Sink& sink);

  // True while an event has started but not ended: a stream that closes now was cut.
  bool midEvent() const { return depth_ > 0; }

 private:
  std::shared_ptr<const FieldMask> object_fields_;
  // The event envelope's mask (object_fields_ under "object"), when object_fields_ is set.
  std::shared_ptr<const FieldMask> event_fields_;
  std::string pending_;  // bytes of the event being assembled
  size_t scanned_ = 0;   // bytes of pending_ already scanned
  int depth_ = 0;        // nesting of {} and [] outside strings
  JsonStringTracker strings_;
};

}  // namespace shardscaler::k8s
