#include "shardscaler/promql_client/exposition.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "shardscaler/promql_client/response_decoder.h"

namespace shardscaler::promql {
namespace {

bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }
bool isLabelStart(char c) { return c != ':' && isNameStart(c); }
bool isLabelChar(char c) { return c != ':' && isNameChar(c); }
bool isBlank(char c) { return c == ' ' || c == '\t'; }

// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), as Go's
// utf8.ValidString, which the format's own parser applies to label values.
bool validUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t extra = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      code = c & 0x1fU;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      code = c & 0x0fU;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      code = c & 0x07U;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0U) != 0x80U) return false;
      code = (code << 6U) | (next & 0x3fU);
    }
    if ((extra == 2 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
        (extra == 3 && (code < 0x10000 || code > 0x10ffff))) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// One line, read left to right.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : line_(line) {}

  bool atEnd() const { return at_ >= line_.size(); }
  char peek() const { return atEnd() ? '\0' : line_[at_]; }
  bool take(char c) {
    if (peek() != c || atEnd()) return false;
    ++at_;
    return true;
  }
  // Skips blanks; true when there was at least one.
  bool skipBlanks() {
    const size_t from = at_;
    while (!atEnd() && isBlank(line_[at_])) ++at_;
    return at_ > from;
  }
  std::string_view name() {
    const size_t from = at_;
    if (atEnd() || !isNameStart(line_[at_])) return {};
    while (!atEnd() && isNameChar(line_[at_])) ++at_;
    return line_.substr(from, at_ - from);
  }
  std::string_view labelName() {
    const size_t from = at_;
    if (atEnd() || !isLabelStart(line_[at_])) return {};
    while (!atEnd() && isLabelChar(line_[at_])) ++at_;
    return line_.substr(from, at_ - from);
  }
  // Up to the next blank or the end.
  std::string_view word() {
    const size_t from = at_;
    while (!atEnd() && !isBlank(line_[at_])) ++at_;
    return line_.substr(from, at_ - from);
  }
  std::string_view rest() {
    std::string_view out = line_.substr(at_);
    at_ = line_.size();
    return out;
  }
  // A quoted label value after its opening '"': the unescaped text, or why it is malformed.
  Expected<std::string> quoted() {
    std::string out;
    while (!atEnd()) {
      const char c = line_[at_++];
      if (c == '"') {
        if (!validUtf8(out)) return std::unexpected("a label value is not valid UTF-8");
        return out;
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (atEnd()) break;
      const char escaped = line_[at_++];
      if (escaped == 'n') {
        out += '\n';
      } else if (escaped == '\\' || escaped == '"') {
        out += escaped;
      } else {
        return std::unexpected(std::string("a label value has an unknown escape"));
      }
    }
    return std::unexpected(std::string("a label value is not closed with '\"'"));
  }

 private:
  std::string_view line_;
  size_t at_ = 0;
};

constexpr std::string_view kMetricTypes[] = {"counter", "gauge", "histogram", "summary", "untyped"};

// Seen HELP and TYPE lines, to refuse a second one for a name.
struct Declared {
  std::set<std::string, std::less<>> help;
  std::set<std::string, std::less<>> type;
};

Expected<void> readComment(LineReader& line, Declared& declared) {
  line.skipBlanks();
  const std::string_view keyword = line.word();
  if (keyword != "HELP" && keyword != "TYPE") return {};  // any other comment
  if (!line.skipBlanks()) {
    return std::unexpected("a " + std::string(keyword) + " line needs a metric name");
  }
  const std::string_view name = line.name();
  if (name.empty()) {
    return std::unexpected("a " + std::string(keyword) + " line names no valid metric");
  }
  if (!line.atEnd() && !isBlank(line.peek())) {
    return std::unexpected("a " + std::string(keyword) + " line's metric name has a bad character");
  }
  auto& seen = keyword == "HELP" ? declared.help : declared.type;
  if (seen.contains(name)) {
    return std::unexpected("a second " + std::string(keyword) + " line for one metric");
  }
  seen.emplace(name);
  if (keyword == "HELP") {
    line.skipBlanks();
    const std::string_view text = line.rest();
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\') continue;
      if (i + 1 >= text.size() || (text[i + 1] != '\\' && text[i + 1] != 'n')) {
        return std::unexpected(std::string("a HELP text has an unknown escape"));
      }
      ++i;
    }
    if (!validUtf8(text)) return std::unexpected(std::string("a HELP text is not valid UTF-8"));
    return {};
  }
  if (!line.skipBlanks()) return std::unexpected(std::string("a TYPE line needs a type"));
  const std::string_view type = line.word();
  line.skipBlanks();
  if (std::ranges::find(kMetricTypes, type) == std::end(kMetricTypes) || !line.atEnd()) {
    return std::unexpected(
        std::string("a TYPE line's type must be counter, gauge, histogram, summary or untyped"));
  }
  return {};
}

Expected<Labels> readLabels(LineReader& line) {
  Labels labels;
  while (true) {
    line.skipBlanks();
    if (line.take('}')) return labels;
    const std::string_view name = line.labelName();
    if (name.empty()) return std::unexpected(std::string("a label name is missing or invalid"));
    if (labels.has(name)) return std::unexpected(std::string("a label is given twice"));
    line.skipBlanks();
    if (!line.take('=')) return std::unexpected(std::string("a label name is not followed by '='"));
    line.skipBlanks();
    if (!line.take('"')) return std::unexpected(std::string("a label value must be quoted"));
    auto value = line.quoted();
    if (!value) return std::unexpected(std::move(value.error()));
    labels.add(std::string(name), std::move(*value));
    line.skipBlanks();
    if (line.take('}')) return labels;
    if (!line.take(',')) {
      return std::unexpected(std::string("labels must be separated by ',' and closed by '}'"));
    }
  }
}

std::optional<int64_t> parseTimestamp(std::string_view text) {
  int64_t value = 0;
  const char* begin = text.data();
  if (!text.empty() && text.front() == '+') ++begin;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return value;
}

// A sample line; `out` is set when `keep` wants it.
Expected<void> readSample(LineReader& line, const KeepSample& keep,
                          std::vector<ExposedSample>& out) {
  const std::string_view name = line.name();
  if (name.empty()) return std::unexpected(std::string("a sample's metric name is invalid"));
  ExposedSample sample;
  bool blank = line.skipBlanks();
  if (line.take('{')) {
    auto labels = readLabels(line);
    if (!labels) return std::unexpected(std::move(labels.error()));
    sample.labels = std::move(*labels);
    blank = line.skipBlanks();
  }
  if (!blank || line.atEnd()) {
    return std::unexpected(std::string(
        line.atEnd() ? "a sample has no value" : "a sample's name or labels run into its value"));
  }
  const auto value = parseSampleValue(line.word());
  if (!value) return std::unexpected(std::string("a sample's value is not a number"));
  sample.value = *value;
  line.skipBlanks();
  if (!line.atEnd()) {
    sample.timestamp_ms = parseTimestamp(line.word());
    if (!sample.timestamp_ms) {
      return std::unexpected(std::string("a sample's timestamp is not an integer"));
    }
    line.skipBlanks();
    if (!line.atEnd()) return std::unexpected(std::string("a sample has text after its timestamp"));
  }
  if (!keep || keep(name)) {
    sample.name = std::string(name);
    out.push_back(std::move(sample));
  }
  return {};
}

}  // namespace

Expected<std::vector<ExposedSample>> parseExposition(std::string_view body,
                                                     const KeepSample& keep) {
  std::vector<ExposedSample> samples;
  Declared declared;
  size_t number = 0;
  while (!body.empty()) {
    const size_t end = body.find('\n');
    std::string_view text = body.substr(0, end);
    body.remove_prefix(end == std::string_view::npos ? body.size() : end + 1);
    ++number;
    if (text.find('\0') != std::string_view::npos || text.find('\r') != std::string_view::npos) {
      return std::unexpected("line " + std::to_string(number) +
                             ": a NUL or carriage return is not part of the format");
    }
    LineReader line(text);
    line.skipBlanks();
    if (line.atEnd()) continue;
    Expected<void> read =
        line.take('#') ? readComment(line, declared) : readSample(line, keep, samples);
    if (!read) return std::unexpected("line " + std::to_string(number) + ": " + read.error());
  }
  return samples;
}

}  // namespace shardscaler::promql
