// Benchmarks of the PromQL client: decoding a 100k-series vector response (against a plain
// nlohmann::json::parse of the same bytes), and the cost of one query against a real Prometheus
// compared with bare libcurl and with the `curl` command line.
#include <spawn.h>
#include <sys/wait.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "shardscaler/promql_client/prometheus_client.h"
#include "shardscaler/promql_client/response_decoder.h"

#ifdef SHARDSCALER_BENCH_HAVE_PROMETHEUS
#include "shardscaler/testenv/prometheus_process.h"
#endif

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX's name

namespace shardscaler::promql {
namespace {

// A response shaped like a real one: six labels per series, values with full float precision,
// and a sprinkling of NaN/+Inf.
std::string vectorResponse(int series) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> value(0, 1e6);
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  char buf[64];
  for (int i = 0; i < series; ++i) {
    if (i > 0) body += ',';
    body +=
        R"({"metric":{"__name__":"prometheus_tsdb_head_samples_appended_total","instance":"10.)";
    body += std::to_string(i / 65536 % 256) + "." + std::to_string(i / 256 % 256) + "." +
            std::to_string(i % 256);
    body +=
        R"(:9090","job":"prometheus-operated","namespace":"monitoring","pod":"prometheus-main-shard-)";
    body += std::to_string(i % 50);
    body += R"(-0","series":")" + std::to_string(i) + R"("},"value":[1700000000.123,")";
    if (i % 1000 == 7) {
      body += "NaN";
    } else if (i % 1000 == 8) {
      body += "+Inf";
    } else {
      std::snprintf(buf, sizeof buf, "%.17g", value(rng));
      body += buf;
    }
    body += "\"]}";
  }
  body += "]}}";
  return body;
}

const std::string& response100k() {
  static const std::string body = vectorResponse(100000);
  return body;
}

void decodeVector100k(benchmark::State& state) {
  const std::string& body = response100k();
  for (auto _ : state) {
    auto decoded = decodeApiResponse(body);
    if (!decoded || decoded->result->vector()->size() != 100000) {
      state.SkipWithError("decode failed");
      return;
    }
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["series/s"] = benchmark::Counter(
      100000.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["body_MB"] = static_cast<double>(body.size()) / 1e6;
}
BENCHMARK(decodeVector100k)->Unit(benchmark::kMillisecond);

void nlohmannParse100k(benchmark::State& state) {
  const std::string& body = response100k();
  for (auto _ : state) {
    auto json = nlohmann::json::parse(body);
    benchmark::DoNotOptimize(json);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(nlohmannParse100k)->Unit(benchmark::kMillisecond);

// The alternative design: a DOM parse, then a conversion into the same result types.
void nlohmannParseThenConvert100k(benchmark::State& state) {
  const std::string& body = response100k();
  for (auto _ : state) {
    auto json = nlohmann::json::parse(body);
    Vector vector;
    const auto& result = json["data"]["result"];
    vector.reserve(result.size());
    for (const auto& item : result) {
      VectorSample sample;
      for (const auto& [name, value] : item["metric"].items()) {
        sample.metric.add(name, value.get<std::string>());
      }
      const auto& pair = item["value"];
      sample.point.timestamp =
          Timestamp(std::chrono::milliseconds(std::llround(pair[0].get<double>() * 1000)));
      sample.point.value = parseSampleValue(pair[1].get_ref<const std::string&>()).value_or(NAN);
      vector.push_back(std::move(sample));
    }
    benchmark::DoNotOptimize(vector);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(nlohmannParseThenConvert100k)->Unit(benchmark::kMillisecond);

#ifdef SHARDSCALER_BENCH_HAVE_PROMETHEUS

// The query the ingestion monitor runs, in shape: an aggregation over a rate.
const char* const kQuery = "sum by (job) (rate(prometheus_tsdb_head_samples_appended_total[1m]))";

testenv::PrometheusProcess& server() {
  static testenv::PrometheusProcess process(testenv::PrometheusOptions{
      .name = "bench",
      .config_yaml =
          "global: {scrape_interval: 1s}\n"
          "scrape_configs:\n- job_name: self\n  static_configs: [{targets: ['@SELF@']}]\n"});
  return process;
}

void clientQuery(benchmark::State& state) {
  auto client = PrometheusClient::create({.base_url = server().url()});
  if (!client) {
    state.SkipWithError(client.error().describe().c_str());
    return;
  }
  for (auto _ : state) {
    auto result = (*client)->query({.query = kQuery});
    if (!result) {
      state.SkipWithError(result.error().describe().c_str());
      return;
    }
    benchmark::DoNotOptimize(result);
  }
  state.counters["connections"] = static_cast<double>((*client)->stats().connections_opened);
}
BENCHMARK(clientQuery)->Unit(benchmark::kMicrosecond)->MinTime(3.0);

size_t discard(char* /*data*/, size_t size, size_t count, void* /*user*/) { return size * count; }

// The floor: one reused libcurl handle POSTing the same form, no decoding.
void libcurlBaseline(benchmark::State& state) {
  CURL* curl = curl_easy_init();
  const std::string url = server().url() + "/api/v1/query";
  char* escaped = curl_easy_escape(curl, kQuery, 0);
  const std::string form = std::string("query=") + escaped;
  curl_free(escaped);
  for (auto _ : state) {
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form.c_str());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &discard);
    const CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK || status != 200) {
      state.SkipWithError("libcurl query failed");
      break;
    }
  }
  curl_easy_cleanup(curl);
}
BENCHMARK(libcurlBaseline)->Unit(benchmark::kMicrosecond)->MinTime(3.0);

// What a shell script pays: one `curl -s` process (new connection, no reuse) per query.
void curlCommand(benchmark::State& state) {
  const std::string url = server().url() + "/api/v1/query";
  std::vector<std::string> args = {
      "curl", "-s", "-o", "/dev/null", "-f", "--data-urlencode", std::string("query=") + kQuery,
      url};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawnp(&pid, "curl", nullptr, nullptr, argv.data(), environ) != 0) {
      state.SkipWithError("cannot run curl");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("curl failed");
      break;
    }
  }
}
BENCHMARK(curlCommand)->Unit(benchmark::kMicrosecond)->MinTime(3.0);

#endif  // SHARDSCALER_BENCH_HAVE_PROMETHEUS

}  // namespace
}  // namespace shardscaler::promql

BENCHMARK_MAIN();
