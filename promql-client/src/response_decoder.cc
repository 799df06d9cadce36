#include "shardscaler/promql_client/response_decoder.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "shardscaler/base/expected.h"

namespace shardscaler::promql {

std::optional<double> parseSampleValue(std::string_view text) {
  // Go writes +Inf with a sign; std::from_chars accepts no leading '+'.
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+') {
    text.remove_prefix(1);
  }
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) {
    // from_chars reports out-of-range for denormals and huge exponents; Go would have written
    // them as +Inf/-Inf or 0 already, so anything else here is malformed.
    return std::nullopt;
  }
  return value;
}

namespace {

using Json = nlohmann::json;

// The JSON positions the decoder cares about; everything else is skipped without being stored.
enum class Frame {
  Envelope,  // the top-level object
  Data,      // .data
  Messages,  // .warnings / .infos
  Result,    // .data.result: an array of series, or a [time, "value"] pair
  Series,    // an element of .data.result
  Metric,    // .metric of a series
  Point,     // a [time, "value"] pair
  Points,    // .values of a matrix series
  Skip,      // inside a value nobody asked for
};

enum class Key {
  Other,
  Status,
  ErrorType,
  Error,
  Warnings,
  Infos,
  Data,
  ResultType,
  Result,
  Metric,
  Value,
  Values,
  Histogram,  // "histogram" / "histograms": native histograms, which this client drops
};

// The shape .data.result turned out to have, before resultType says which it should have been
// (the API sends resultType first, but JSON objects are unordered).
enum class Shape { Unknown, Series, Pair };

class ResponseSax {
 public:
  bool null() { return scalarValue("null"); }
  bool boolean(bool /*value*/) { return scalarValue("a boolean"); }
  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool number_integer(Json::number_integer_t v) { return number(static_cast<double>(v)); }
  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool number_unsigned(Json::number_unsigned_t v) { return number(static_cast<double>(v)); }
  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool number_float(Json::number_float_t v, const Json::string_t& /*raw*/) { return number(v); }
  bool binary(Json::binary_t& /*value*/) { return fail("unexpected binary value"); }

  bool string(Json::string_t& s) {
    if (stack_.empty()) return fail("the body is a JSON string, not an object");
    switch (stack_.back()) {
      case Frame::Envelope:
        switch (key_) {
          case Key::Status:
            status_ = std::move(s);
            return true;
          case Key::ErrorType:
            response_.error_type = std::move(s);
            return true;
          case Key::Error:
            response_.error = std::move(s);
            return true;
          default:
            return true;
        }
      case Frame::Data:
        if (key_ == Key::ResultType) result_type_ = std::move(s);
        if (key_ == Key::Result) return fail("data.result is a string, not an array");
        return true;
      case Frame::Messages:
        response_.warnings.push_back(std::move(s));
        return true;
      case Frame::Metric:
        // Copies, not moves: moving would steal the lexer's token buffer, which it then has to
        // grow again for every string; a copy is one exact-size allocation (or none, SSO).
        metric_.add(label_name_, s);
        return true;
      case Frame::Point:
        return pointValue(s);
      case Frame::Result:
        if (shape_ != Shape::Pair || !point_has_time_ || pair_has_value_) {
          return fail("data.result holds a string where a series or a [time, value] pair belongs");
        }
        pair_value_ = std::move(s);
        pair_has_value_ = true;
        return true;
      case Frame::Series:
      case Frame::Points:
        if (stack_.back() == Frame::Points) return fail("a matrix point is not an array");
        return true;
      case Frame::Skip:
        return true;
    }
    return true;
  }

  bool key(Json::string_t& k) {
    switch (stack_.back()) {
      case Frame::Envelope:
        key_ = k == "status"      ? Key::Status
               : k == "errorType" ? Key::ErrorType
               : k == "error"     ? Key::Error
               : k == "warnings"  ? Key::Warnings
               : k == "infos"     ? Key::Infos
               : k == "data"      ? Key::Data
                                  : Key::Other;
        return true;
      case Frame::Data:
        key_ = k == "resultType" ? Key::ResultType : k == "result" ? Key::Result : Key::Other;
        return true;
      case Frame::Series:
        key_ = k == "metric"                             ? Key::Metric
               : k == "value"                            ? Key::Value
               : k == "values"                           ? Key::Values
               : (k == "histogram" || k == "histograms") ? Key::Histogram
                                                         : Key::Other;
        return true;
      case Frame::Metric:
        label_name_.assign(k);
        return true;
      default:
        return true;
    }
  }

  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool start_object(std::size_t /*size*/) {
    if (stack_.empty()) {
      envelope_seen_ = true;
      stack_.push_back(Frame::Envelope);
      return true;
    }
    switch (stack_.back()) {
      case Frame::Envelope:
        stack_.push_back(key_ == Key::Data ? Frame::Data : Frame::Skip);
        if (key_ == Key::Data) data_seen_ = true;
        return true;
      case Frame::Data:
        if (key_ == Key::Result) return fail("data.result is an object, not an array");
        stack_.push_back(Frame::Skip);
        return true;
      case Frame::Result:
        if (shape_ == Shape::Pair) return fail("data.result mixes a [time, value] pair and series");
        shape_ = Shape::Series;
        series_has_value_ = series_has_values_ = series_has_histogram_ = false;
        metric_ = Labels();
        metric_.reserve(labels_per_series_);
        stack_.push_back(Frame::Series);
        return true;
      case Frame::Series:
        stack_.push_back(key_ == Key::Metric ? Frame::Metric : Frame::Skip);
        return true;
      case Frame::Skip:
        stack_.push_back(Frame::Skip);
        return true;
      case Frame::Point:
        // A native histogram sample; only reached through "histogram"/"histograms", which skip.
        return fail("a sample value is an object, not a string");
      default:
        return fail("unexpected object in the response");
    }
  }

  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool end_object() {
    const Frame frame = stack_.back();
    stack_.pop_back();
    if (frame == Frame::Series) return finishSeries();
    return true;
  }

  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool start_array(std::size_t /*size*/) {
    if (stack_.empty()) return fail("the body is a JSON array, not an object");
    switch (stack_.back()) {
      case Frame::Envelope:
        stack_.push_back(key_ == Key::Warnings || key_ == Key::Infos ? Frame::Messages
                                                                     : Frame::Skip);
        return true;
      case Frame::Data:
        if (key_ == Key::Result) {
          if (result_seen_) return fail("data.result appears twice");
          result_seen_ = true;
          stack_.push_back(Frame::Result);
          point_has_time_ = false;
          return true;
        }
        stack_.push_back(Frame::Skip);
        return true;
      case Frame::Series:
        if (key_ == Key::Value) {
          if (series_has_value_ || series_has_values_) return fail("a series has two values");
          series_has_value_ = true;
          beginPoint();
        } else if (key_ == Key::Values) {
          if (series_has_value_ || series_has_values_) return fail("a series has two values");
          series_has_values_ = true;
          points_.clear();
          stack_.push_back(Frame::Points);
        } else {
          series_has_histogram_ = series_has_histogram_ || key_ == Key::Histogram;
          stack_.push_back(Frame::Skip);
        }
        return true;
      case Frame::Points:
        beginPoint();
        return true;
      case Frame::Skip:
        stack_.push_back(Frame::Skip);
        return true;
      default:
        return fail("unexpected array in the response");
    }
  }

  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool end_array() {
    const Frame frame = stack_.back();
    stack_.pop_back();
    if (frame != Frame::Point) return true;
    if (!point_has_time_ || !point_has_value_)
      return fail("a sample is not a [time, \"value\"] pair");
    if (stack_.back() == Frame::Points) {
      points_.push_back(point_);
    }
    return true;
  }

  // NOLINTNEXTLINE(readability-identifier-naming): nlohmann::json's SAX names
  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& e) {
    error_ = "invalid JSON at byte " + std::to_string(position) + ": " + e.what();
    return false;
  }

  Expected<ApiResponse> finish() && {
    if (!error_.empty()) return std::unexpected(std::move(error_));
    if (!envelope_seen_) return std::unexpected(std::string("the body is not a JSON object"));
    if (status_ == "error") {
      response_.success = false;
      if (response_.error_type.empty() && response_.error.empty()) {
        return std::unexpected(
            std::string("status is \"error\" but neither errorType nor error is set"));
      }
      return std::move(response_);
    }
    if (status_ != "success") {
      return std::unexpected(status_.empty() ? std::string("no \"status\" in the response")
                                             : "unknown status \"" + status_ + "\"");
    }
    response_.success = true;
    if (!data_seen_)
      return std::unexpected(std::string("status is \"success\" but there is no data"));
    auto data = buildData();
    if (!data) return std::unexpected(std::move(data.error()));
    QueryResult result;
    result.data = std::move(*data);
    result.warnings = std::move(response_.warnings);
    if (dropped_histograms_ > 0) {
      result.warnings.push_back(std::to_string(dropped_histograms_) +
                                " native histogram series dropped: this client decodes float "
                                "samples only");
    }
    response_.warnings = result.warnings;
    response_.result = std::move(result);
    return std::move(response_);
  }

 private:
  using Data = decltype(QueryResult::data);

  Expected<Data> buildData() {
    auto wrong_shape = [this](const char* what) {
      return std::unexpected("resultType is \"" + result_type_ + "\" but data.result holds " +
                             what);
    };
    if (result_type_ == "vector" || result_type_ == "matrix") {
      const bool want_vector = result_type_ == "vector";
      if (shape_ == Shape::Pair) return wrong_shape("a [time, value] pair");
      if (want_vector && !matrix_.empty()) return wrong_shape("series with \"values\"");
      if (!want_vector && !vector_.empty()) return wrong_shape("series with a single \"value\"");
      if (want_vector) return Data(std::move(vector_));
      return Data(std::move(matrix_));
    }
    if (result_type_ == "scalar" || result_type_ == "string") {
      if (shape_ == Shape::Series) return wrong_shape("series");
      if (!result_seen_ || !point_has_time_ || !pair_has_value_) {
        return wrong_shape("no [time, value] pair");
      }
      if (result_type_ == "string") {
        return Data(StringValue{.timestamp = point_.timestamp, .value = std::move(pair_value_)});
      }
      auto value = parseSampleValue(pair_value_);
      if (!value) return std::unexpected("scalar value \"" + pair_value_ + "\" is not a number");
      return Data(Scalar{.point = {.timestamp = point_.timestamp, .value = *value}});
    }
    if (result_type_.empty()) return std::unexpected(std::string("data has no resultType"));
    return std::unexpected("unknown resultType \"" + result_type_ + "\"");
  }

  void beginPoint() {
    point_has_time_ = point_has_value_ = false;
    stack_.push_back(Frame::Point);
  }

  bool number(double seconds) {
    if (stack_.empty()) return fail("the body is a JSON number, not an object");
    const Frame frame = stack_.back();
    if (frame == Frame::Result) {
      if (shape_ == Shape::Series) return fail("data.result mixes series and a [time, value] pair");
      if (point_has_time_) return fail("data.result has two timestamps");
      shape_ = Shape::Pair;
    } else if (frame == Frame::Point) {
      if (point_has_time_ || point_has_value_) return fail("a sample has more than one timestamp");
    } else if (frame == Frame::Metric) {
      return fail("label \"" + label_name_ + "\" has a number value, not a string");
    } else {
      return true;
    }
    // 1e15 s is far beyond any real timestamp yet keeps the milliseconds exact in an int64.
    if (!std::isfinite(seconds) || std::fabs(seconds) > 1e15) {
      return fail("timestamp " + std::to_string(seconds) + " is out of range");
    }
    point_.timestamp = Timestamp(std::chrono::milliseconds(std::llround(seconds * 1000.0)));
    point_has_time_ = true;
    return true;
  }

  bool pointValue(const std::string& text) {
    if (!point_has_time_ || point_has_value_)
      return fail("a sample is not a [time, \"value\"] pair");
    auto value = parseSampleValue(text);
    if (!value) return fail("sample value \"" + text + "\" is not a number");
    point_.value = *value;
    point_has_value_ = true;
    return true;
  }

  // null and booleans are legal only where nothing is read (e.g. "warnings": null).
  bool scalarValue(const char* what) {
    if (stack_.empty()) return fail(std::string("the body is ") + what + ", not an object");
    switch (stack_.back()) {
      case Frame::Point:
        return fail(std::string("a sample holds ") + what);
      case Frame::Metric:
        return fail("label \"" + label_name_ + "\" is " + what + ", not a string");
      case Frame::Result:
      case Frame::Messages:
      case Frame::Points:
        return fail(std::string("unexpected ") + what + " in the response");
      default:
        return true;
    }
  }

  bool finishSeries() {
    labels_per_series_ = metric_.size();
    if (series_has_value_) {
      vector_.push_back(VectorSample{.metric = std::move(metric_), .point = point_});
    } else if (series_has_values_) {
      matrix_.push_back(MatrixSeries{.metric = std::move(metric_), .points = std::move(points_)});
      points_ = {};
    } else if (series_has_histogram_) {
      ++dropped_histograms_;
    } else {
      return fail("a series has neither \"value\" nor \"values\"");
    }
    return true;
  }

  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  std::vector<Frame> stack_;
  Key key_ = Key::Other;
  bool envelope_seen_ = false;
  bool data_seen_ = false;
  bool result_seen_ = false;
  std::string status_;
  std::string result_type_;
  Shape shape_ = Shape::Unknown;
  ApiResponse response_;
  std::string error_;

  // The series being read.
  Labels metric_;
  size_t labels_per_series_ = 0;  // the previous series' count: a good guess for the next
  std::string label_name_;
  bool series_has_value_ = false;
  bool series_has_values_ = false;
  bool series_has_histogram_ = false;
  std::vector<SamplePoint> points_;
  SamplePoint point_;
  bool point_has_time_ = false;
  bool point_has_value_ = false;
  // A scalar or string result's value, kept as text until resultType says which it is.
  std::string pair_value_;
  bool pair_has_value_ = false;

  Vector vector_;
  Matrix matrix_;
  size_t dropped_histograms_ = 0;
};

}  // namespace

Expected<ApiResponse> decodeApiResponse(std::string_view body) {
  ResponseSax sax;
  const char* begin = body.data();
  Json::sax_parse(begin, begin + body.size(), &sax, nlohmann::detail::input_format_t::json,
                  /*strict=*/true);
  return std::move(sax).finish();
}

}  // namespace shardscaler::promql
