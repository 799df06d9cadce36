// parseProjected: JSON text turned into a DOM of the kept fields only. The cost of a
// Kubernetes object's JSON is its tokenizing and its DOM (a std::map node and a string per
// member); a cache that keeps its metadata builds a tenth of the DOM, and simdjson tokenizes
// the text (validating all of it) several times faster than nlohmann's lexer, which read every
// byte of the dropped parts too: most of a StatefulSet's PartialObjectMetadata is managedFields.
// nlohmann's SAX parser stays as the judge of what simdjson refuses (its limits differ: nesting
// deeper than 1024, integers beyond 64 bits), so what is accepted, and how, is unchanged.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shardscaler/k8s_client/field_mask.h"

namespace shardscaler::k8s {
namespace {

using Json = nlohmann::json;

class ProjectingSax {
 public:
  explicit ProjectingSax(const FieldMask& mask) : root_mask_(&mask) {}

  // NOLINTBEGIN(readability-identifier-naming): nlohmann::json's SAX names
  bool null() { return scalar(Json()); }
  bool boolean(bool value) { return scalar(Json(value)); }
  bool number_integer(Json::number_integer_t value) { return scalar(Json(value)); }
  bool number_unsigned(Json::number_unsigned_t value) { return scalar(Json(value)); }
  bool number_float(Json::number_float_t value, const Json::string_t& /*text*/) {
    return scalar(Json(value));
  }
  bool string(Json::string_t& value) { return scalar(Json(std::move(value))); }
  bool binary(Json::binary_t& value) { return scalar(Json(std::move(value))); }

  bool start_object(std::size_t /*elements*/) { return open(Json::object()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*elements*/) { return open(Json::array()); }
  bool end_array() { return close(); }

  bool key(Json::string_t& name) {
    if (skip_depth_ > 0) return true;
    Frame& top = stack_.back();
    const FieldMask* mask = top.mask->member(name);
    if (mask == nullptr) {
      skip_next_ = true;
      return true;
    }
    next_mask_ = mask;
    next_slot_ = &(*top.value)[std::move(name)];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& e) {
    error_ = "invalid JSON at byte " + std::to_string(position) + ": " + e.what();
    return false;
  }
  // NOLINTEND(readability-identifier-naming)

  Result<Json> finish() && {
    if (!error_.empty()) return makeError(ErrorKind::Decode, std::move(error_));
    return std::move(root_);
  }

 private:
  struct Frame {
    Json* value;  // an object or an array being filled
    const FieldMask* mask;
  };

  // Whether the value that starts now is dropped; consumes the "drop the next value" mark.
  bool dropping() {
    if (skip_depth_ > 0) return true;
    if (skip_next_) {
      skip_next_ = false;
      return true;
    }
    return false;
  }

  // Where the value that starts now goes, and its mask. Objects are std::maps, so a slot
  // stays put; an array's last element stays put until its next one is pushed, which happens
  // only after that element's frame is closed.
  std::pair<Json*, const FieldMask*> place(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return {&root_, root_mask_};
    }
    Frame& top = stack_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(value));
      return {&top.value->back(), top.mask};  // arrays are transparent to the mask
    }
    *next_slot_ = std::move(value);
    return {next_slot_, next_mask_};
  }

  bool scalar(Json value) {
    if (!dropping()) place(std::move(value));
    return true;
  }

  bool open(Json empty) {
    if (dropping()) {
      ++skip_depth_;
      return true;
    }
    auto [slot, mask] = place(std::move(empty));
    stack_.push_back({slot, mask});
    return true;
  }

  bool close() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    stack_.pop_back();
    return true;
  }

  const FieldMask* root_mask_;
  Json root_;
  std::vector<Frame> stack_;
  Json* next_slot_ = nullptr;  // the member named by the last kept key
  const FieldMask* next_mask_ = nullptr;
  bool skip_next_ = false;      // the last key was dropped: so is its value
  std::size_t skip_depth_ = 0;  // > 0 inside a dropped object or array
  std::string error_;
};

namespace dom = simdjson::dom;

// The kept part of a parsed element as nlohmann builds it: non-negative integers unsigned, as
// nlohmann's lexer reads them, and the last of duplicate keys winning.
Json convert(dom::element element, const FieldMask& mask) {
  switch (element.type()) {
    case dom::element_type::OBJECT: {
      Json out = Json::object();
      for (dom::key_value_pair member : dom::object(element)) {
        if (const FieldMask* kept = mask.member(member.key)) {
          out[std::string(member.key)] = convert(member.value, *kept);
        }
      }
      return out;
    }
    case dom::element_type::ARRAY: {
      Json out = Json::array();
      for (dom::element item : dom::array(element)) out.push_back(convert(item, mask));
      return out;
    }
    case dom::element_type::INT64: {
      const std::int64_t value = element.get_int64().value_unsafe();
      return value >= 0 ? Json(static_cast<std::uint64_t>(value)) : Json(value);
    }
    case dom::element_type::UINT64:
      return Json(element.get_uint64().value_unsafe());
    case dom::element_type::DOUBLE:
      return Json(element.get_double().value_unsafe());
    case dom::element_type::STRING:
      return Json(std::string(element.get_string().value_unsafe()));
    case dom::element_type::BOOL:
      return Json(element.get_bool().value_unsafe());
    case dom::element_type::NULL_VALUE:
      break;
  }
  return Json();
}

// One parser per thread, reused: it keeps buffers sized to the largest text it parsed, so texts
// beyond kReusedUpTo (a whole list body, a large Secret) get a parser of their own, freed after.
constexpr std::size_t kReusedUpTo = std::size_t{1} << 20;

std::optional<Json> parseFast(std::string_view text, const FieldMask& mask) {
  thread_local dom::parser reused;
  std::unique_ptr<dom::parser> own;
  dom::parser* parser = &reused;
  if (text.size() > kReusedUpTo) {
    own = std::make_unique<dom::parser>();
    parser = own.get();
  }
  dom::element root;
  if (parser->parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root) !=
      simdjson::SUCCESS) {
    return std::nullopt;
  }
  return convert(root, mask);
}

}  // namespace

Result<Json> parseProjected(std::string_view text, const FieldMask& mask) {
  if (auto parsed = parseFast(text, mask)) return std::move(*parsed);
  ProjectingSax sax(mask);
  const char* begin = text.data();
  Json::sax_parse(begin, begin + text.size(), &sax, nlohmann::detail::input_format_t::json,
                  /*strict=*/true);
  return std::move(sax).finish();
}

}  // namespace shardscaler::k8s
