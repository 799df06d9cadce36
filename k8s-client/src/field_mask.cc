#include "shardscaler/k8s_client/field_mask.h"

#include <algorithm>

namespace shardscaler::k8s {

FieldMask FieldMask::keepAll() { return FieldMask(true); }
FieldMask FieldMask::keepNone() { return FieldMask(false); }

// The node at `path`, created on the way with the default of its parent, so that keep() on a
// keepNone() mask keeps nothing beside the path and drop() on a keepAll() mask drops nothing else.
FieldMask& FieldMask::at(std::initializer_list<std::string_view> path) {
  FieldMask* node = this;
  for (std::string_view key : path) {
    auto it = std::ranges::find_if(node->members_, [&](const auto& m) { return m.first == key; });
    if (it == node->members_.end()) {
      node->members_.emplace_back(std::string(key), FieldMask(node->keep_others_));
      it = std::prev(node->members_.end());
    }
    node = &it->second;
  }
  return *node;
}

FieldMask& FieldMask::keep(std::initializer_list<std::string_view> path) {
  at(path) = keepAll();
  return *this;
}

FieldMask& FieldMask::drop(std::initializer_list<std::string_view> path) {
  FieldMask& node = at(path);
  node = keepNone();
  node.dropped_ = true;
  return *this;
}

FieldMask& FieldMask::put(std::initializer_list<std::string_view> path, FieldMask mask) {
  at(path) = std::move(mask);
  return *this;
}

const FieldMask* FieldMask::member(std::string_view key) const {
  static const FieldMask kAll = keepAll();
  for (const auto& [name, mask] : members_) {
    if (name == key) return mask.dropped_ ? nullptr : &mask;
  }
  return keep_others_ ? &kAll : nullptr;
}

bool FieldMask::keepsEverything() const {
  if (!keep_others_ || dropped_) return false;
  return std::ranges::all_of(members_, [](const auto& m) { return m.second.keepsEverything(); });
}

void FieldMask::apply(nlohmann::json& value) const {
  if (value.is_array()) {
    for (auto& element : value) apply(element);
    return;
  }
  if (!value.is_object() || keepsEverything()) return;
  for (auto it = value.begin(); it != value.end();) {
    const FieldMask* mask = member(it.key());
    if (mask == nullptr) {
      it = value.erase(it);
    } else {
      mask->apply(*it);
      ++it;
    }
  }
}

}  // namespace shardscaler::k8s
