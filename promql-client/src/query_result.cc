#include "shardscaler/promql_client/query_result.h"

namespace shardscaler::promql {

std::string_view toString(ResultType type) {
  switch (type) {
    case ResultType::Vector:
      return "vector";
    case ResultType::Matrix:
      return "matrix";
    case ResultType::Scalar:
      return "scalar";
    case ResultType::String:
      return "string";
  }
  return "unknown";
}

}  // namespace shardscaler::promql
