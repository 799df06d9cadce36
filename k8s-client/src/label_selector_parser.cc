#include "label_selector_parser.h"

#include <algorithm>
#include <cctype>

#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_client/validation.h"

namespace shardscaler::k8s::detail {
namespace {

// Written by hand: no Debian package parses Kubernetes selectors in C++. It follows
// apimachinery's labels.Parse for the operators of SelectorOperator, with its checks of keys
// and values.

bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool isIdentifierChar(char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.' || c == '/'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expected<std::vector<SelectorRequirement>> parse() {
    std::vector<SelectorRequirement> out;
    skipSpace();
    if (pos_ == text_.size()) return out;
    while (true) {
      auto requirement = parseRequirement();
      if (!requirement) return std::unexpected(requirement.error());
      out.push_back(std::move(*requirement));
      skipSpace();
      if (pos_ == text_.size()) return out;
      if (text_[pos_] != ',') return fail("expected ',' or the end");
      ++pos_;
      skipSpace();
    }
  }

 private:
  std::unexpected<std::string> fail(const std::string& what) const {
    return std::unexpected("label selector \"" + std::string(text_) + "\": " + what +
                           " at position " + std::to_string(pos_ + 1));
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) {
      ++pos_;
    }
  }

  std::string_view identifier() {
    const size_t start = pos_;
    while (pos_ < text_.size() && isIdentifierChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  Expected<std::string> key() {
    skipSpace();
    const std::string_view k = identifier();
    if (k.empty()) return fail("expected a label key");
    if (auto why = invalidLabelKey(k)) return fail(*why);
    return std::string(k);
  }

  Expected<std::string> value(const std::string& key) {
    skipSpace();
    const std::string_view v = identifier();
    if (auto why = invalidLabelValue(key, v)) return fail(*why);
    return std::string(v);
  }

  bool consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  // A keyword ("in", "notin") is a whole word.
  bool consumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < text_.size() && isIdentifierChar(text_[end])) return false;
    pos_ = end;
    return true;
  }

  Expected<SelectorRequirement> parseRequirement() {
    SelectorRequirement r;
    if (consume("!")) {
      auto k = key();
      if (!k) return std::unexpected(k.error());
      r.key = std::move(*k);
      r.op = SelectorOperator::DoesNotExist;
      return r;
    }
    auto k = key();
    if (!k) return std::unexpected(k.error());
    r.key = std::move(*k);
    skipSpace();
    if (pos_ == text_.size() || text_[pos_] == ',') {
      r.op = SelectorOperator::Exists;
      return r;
    }
    if (consume("!=")) {
      r.op = SelectorOperator::NotEquals;
    } else if (consume("==") || consume("=")) {
      r.op = SelectorOperator::Equals;
    } else if (consumeWord("notin")) {
      r.op = SelectorOperator::NotIn;
    } else if (consumeWord("in")) {
      r.op = SelectorOperator::In;
    } else if (text_[pos_] == '<' || text_[pos_] == '>' || consumeWord("gt") || consumeWord("lt")) {
      return fail("numeric comparisons are not supported");
    } else {
      return fail("expected an operator (=, ==, !=, in, notin) after \"" + r.key + "\"");
    }
    if (r.op == SelectorOperator::Equals || r.op == SelectorOperator::NotEquals) {
      auto v = value(r.key);
      if (!v) return std::unexpected(v.error());
      r.values.push_back(std::move(*v));
      return r;
    }
    skipSpace();
    if (!consume("(")) return fail("expected '(' after \"" + r.key + "\"'s operator");
    while (true) {
      auto v = value(r.key);
      if (!v) return std::unexpected(v.error());
      // An empty member is the empty value, as in apimachinery's parser: "(a,)" is {"", "a"} and
      // "()" is {""}.
      r.values.push_back(std::move(*v));
      skipSpace();
      if (consume(")")) break;
      if (!consume(",")) return fail("missing ')' after the values of \"" + r.key + "\"");
    }
    std::ranges::sort(r.values);
    r.values.erase(std::ranges::unique(r.values).begin(), r.values.end());
    return r;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Expected<std::vector<SelectorRequirement>> parseSelectorRequirements(std::string_view text) {
  return Parser(text).parse();
}

std::optional<std::string> invalidLabelKey(std::string_view key) {
  if (isQualifiedName(key)) return std::nullopt;
  return "\"" + std::string(key) + "\" is not a valid label key";
}

std::optional<std::string> invalidLabelValue(std::string_view key, std::string_view value) {
  if (isValidLabelValue(value)) return std::nullopt;
  return "\"" + std::string(value) + "\" is not a valid value for \"" + std::string(key) + "\"";
}

}  // namespace shardscaler::k8s::detail
