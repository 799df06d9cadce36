// Work-queue throughput: add + get + done per second, unique or duplicated keys, 1 or 2
// workers, with the real clock. Measures the queue's locking and bookkeeping only.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/work_queue.h"

namespace shardscaler::k8s {
namespace {

constexpr int kAdds = 20000;  // add() calls per iteration
constexpr const char* kEndMarker = "~end";

// Arguments: workers (1, 2), copies of each key among the adds (1 = unique, 4 = duplicates).
void workQueueAddGetDone(benchmark::State& state) {
  const auto workers = static_cast<int>(state.range(0));
  const auto copies = static_cast<int>(state.range(1));
  std::vector<std::string> keys;
  keys.reserve(kAdds);
  // Duplicates arrive close together (as one object's burst of watch events does).
  for (int i = 0; i < kAdds; ++i)
    keys.push_back("monitoring/prometheus-" + std::to_string(i / copies));
  RealClock clock;
  std::int64_t processed_total = 0;
  for (auto _ : state) {
    WorkQueue queue(clock);
    std::atomic<std::int64_t> processed{0};
    std::atomic<bool> end_seen{false};
    std::vector<std::thread> pool;
    pool.reserve(workers);
    for (int w = 0; w < workers; ++w) {
      pool.emplace_back([&] {
        while (auto key = queue.get()) {
          benchmark::DoNotOptimize(key->data());
          queue.done(*key);
          processed.fetch_add(1, std::memory_order_relaxed);
          if (*key == kEndMarker) {
            end_seen = true;
            end_seen.notify_one();
          }
        }
      });
    }
    for (const auto& key : keys) queue.add(key);
    // FIFO: once the marker is handed out, every key added before it has been too.
    queue.add(kEndMarker);
    end_seen.wait(false);
    queue.shutDownWithDrain(std::chrono::seconds(10));
    for (auto& thread : pool) thread.join();
    processed_total += processed.load();
  }
  state.SetItemsProcessed(state.iterations() * kAdds);
  state.counters["gets_per_s"] =
      benchmark::Counter(static_cast<double>(processed_total), benchmark::Counter::kIsRate);
  state.counters["gets_per_iter"] =
      static_cast<double>(processed_total) / static_cast<double>(state.iterations());
}
BENCHMARK(workQueueAddGetDone)
    ->ArgNames({"workers", "copies"})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({1, 4})
    ->Args({2, 4})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One thread doing add + get + done in turn: the cost of one cycle without contention.
void workQueueCycleSingleThread(benchmark::State& state) {
  RealClock clock;
  WorkQueue queue(clock);
  const std::string key = "monitoring/prometheus-main";
  for (auto _ : state) {
    queue.add(key);
    auto got = queue.get();
    queue.done(*got);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(workQueueCycleSingleThread);

}  // namespace
}  // namespace shardscaler::k8s

BENCHMARK_MAIN();
