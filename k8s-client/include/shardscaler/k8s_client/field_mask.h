// Which fields of an API object a cache keeps, and a JSON decoder that builds only those (the
// rest of the text is read but never becomes a DOM node). It never drops a field it was told to
// keep.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/error.h"

namespace shardscaler::k8s {

// A tree of object member names. At each level, members it names follow their own mask, and
// the others are all kept (keepAll) or all dropped (keepNone). Arrays are transparent: the mask
// of an array applies to each of its elements, so {"status", "conditions", "type"} keeps the
// type of every condition. Scalars are kept whole wherever the mask reaches them.
class FieldMask {
 public:
  static FieldMask keepAll();
  static FieldMask keepNone();

  // Keeps `path` whole (and the objects on the way to it). keepNone().keep({"metadata", "name"})
  // keeps metadata.name and nothing else.
  FieldMask& keep(std::initializer_list<std::string_view> path);
  // Drops `path`. keepAll().drop({"metadata", "managedFields"}) keeps everything else.
  FieldMask& drop(std::initializer_list<std::string_view> path);
  // Puts `mask` at `path`: {"items"} of a list, {"object"} of a watch event.
  FieldMask& put(std::initializer_list<std::string_view> path, FieldMask mask);

  // The mask of member `key`, or nullptr when it is dropped.
  const FieldMask* member(std::string_view key) const;
  // True when nothing below this level is dropped (the mask is the identity).
  bool keepsEverything() const;

  // Removes what the mask drops from a decoded value: the same result as parseProjected.
  void apply(nlohmann::json& value) const;

 private:
  explicit FieldMask(bool keep_others) : keep_others_(keep_others) {}
  FieldMask& at(std::initializer_list<std::string_view> path);

  bool keep_others_;
  bool dropped_ = false;
  // Few members per level: a vector searched in order beats a map's allocations.
  std::vector<std::pair<std::string, FieldMask>> members_;
};

// Parses JSON text keeping only what `mask` keeps, through nlohmann's SAX interface: dropped
// members are scanned but no DOM node is built for them. A Decode error for text that is not
// JSON (with the position).
Result<nlohmann::json> parseProjected(std::string_view text, const FieldMask& mask);

}  // namespace shardscaler::k8s
