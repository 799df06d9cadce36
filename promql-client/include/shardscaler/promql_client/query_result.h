// The decoded result of a query: one of the API's four result types, plus the server's warnings.
// Pure values: nothing here parses, queries, or knows what the series mean.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "shardscaler/promql_client/labels.h"

namespace shardscaler::promql {

// The API sends Unix seconds with millisecond precision; that is all Prometheus keeps.
using Timestamp = std::chrono::sys_time<std::chrono::milliseconds>;

struct SamplePoint {
  Timestamp timestamp{};
  double value = 0;  // NaN, +Inf and -Inf arrive as such ("NaN", "+Inf", "-Inf" on the wire)
};

// One element of an instant vector.
struct VectorSample {
  Labels metric{};
  SamplePoint point{};
};

// One series of a range vector (matrix).
struct MatrixSeries {
  Labels metric{};
  std::vector<SamplePoint> points{};
};

using Vector = std::vector<VectorSample>;
using Matrix = std::vector<MatrixSeries>;

struct Scalar {
  SamplePoint point{};
};

struct StringValue {
  Timestamp timestamp{};
  std::string value{};
};

enum class ResultType { Vector, Matrix, Scalar, String };
std::string_view toString(ResultType type);

struct QueryResult {
  std::variant<Vector, Matrix, Scalar, StringValue> data{};
  // Non-fatal problems the server reported (e.g. a PromQL "info" or partial data).
  std::vector<std::string> warnings{};

  ResultType type() const { return static_cast<ResultType>(data.index()); }
  // nullptr when the result is of another type.
  const Vector* vector() const { return std::get_if<Vector>(&data); }
  const Matrix* matrix() const { return std::get_if<Matrix>(&data); }
  const Scalar* scalar() const { return std::get_if<Scalar>(&data); }
  const StringValue* string() const { return std::get_if<StringValue>(&data); }
};

}  // namespace shardscaler::promql
