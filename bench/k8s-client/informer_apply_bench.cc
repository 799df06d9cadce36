// Decode-and-apply of StatefulSet watch events into an Informer's store, on one core: the
// bytes of a watch stream go through the RestClient's decoder, the reflector and the store.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <malloc.h>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/store.h"
#include "shardscaler/k8s_client/watch_stream.h"
#include "statefulset_fixture.h"

namespace shardscaler::k8s {
namespace {

constexpr int kShards = 50;
constexpr int kBatch = 2000;           // events per benchmark iteration
constexpr std::size_t kChunk = 16384;  // bytes per read, like a socket read

// MODIFIED events for kShards StatefulSets, one stream of newline-separated JSON.
std::string watchStreamBytes(std::int64_t first_rv, std::size_t* event_bytes = nullptr) {
  std::string stream;
  for (int i = 0; i < kBatch; ++i) {
    Json event{{"type", "MODIFIED"},
               {"object", bench::prometheusStatefulSet(i % kShards, first_rv + i)}};
    auto line = event.dump();
    if (event_bytes && i == 0) *event_bytes = line.size();
    stream += line;
    stream += '\n';
  }
  return stream;
}

// Serves an empty list, then one watch that decodes whatever bytes the benchmark hands it.
class StreamingClient final : public KubeClient {
 public:
  void feed(const std::string* bytes) {
    std::unique_lock lock(mutex_);
    pending_ = bytes;
    cv_.notify_all();
    cv_.wait(lock, [&] { return pending_ == nullptr; });
  }

  Result<Json> list(const Resource&, const std::string&, const ListOptions&) override {
    return Json{{"metadata", {{"resourceVersion", "1"}}}, {"items", Json::array()}};
  }
  Result<void> watch(const Resource&, const std::string&, const WatchOptions&,
                     const WatchHandler& handler, const std::atomic<bool>* stop) override {
    WatchStreamDecoder decoder;
    std::unique_lock lock(mutex_);
    while (true) {
      // Polls the stop flag as the real client does between reads.
      while (pending_ == nullptr && !stop->load()) cv_.wait_for(lock, std::chrono::milliseconds(5));
      if (stop->load()) return {};
      std::string_view bytes(*pending_);
      for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
        auto fed = decoder.feed(bytes.substr(at, kChunk), handler);
        if (!fed) return std::unexpected(fed.error());
      }
      pending_ = nullptr;
      cv_.notify_all();
    }
  }
  Result<Json> get(const Resource&, const std::string&, const std::string&,
                   const std::string&) override {
    return makeError(ErrorKind::Other, "unused");
  }
  Result<Json> create(const Resource&, const std::string&, const Json&) override {
    return makeError(ErrorKind::Other, "unused");
  }
  Result<Json> update(const Resource&, const std::string&, const Json&,
                      const std::string&) override {
    return makeError(ErrorKind::Other, "unused");
  }
  Result<Json> patch(const Resource&, const std::string&, const std::string&, PatchType,
                     const Json&, const std::string&) override {
    return makeError(ErrorKind::Other, "unused");
  }
  Result<Json> remove(const Resource&, const std::string&, const std::string&,
                      const DeleteOptions&) override {
    return makeError(ErrorKind::Other, "unused");
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  const std::string* pending_ = nullptr;
};

// The whole path: bytes -> decoder -> reflector -> store -> handler (which counts).
void informerDecodeAndApply(benchmark::State& state) {
  const bool drop_managed_fields = state.range(0) != 0;
  // Distinct resourceVersions per batch, so every event is a real update.
  std::vector<std::string> streams;
  streams.reserve(4);
  std::size_t event_bytes = 0;
  for (int b = 0; b < 4; ++b) streams.push_back(watchStreamBytes(100 + b * kBatch, &event_bytes));

  RealClock clock;
  StreamingClient client;
  InformerOptions options;
  if (drop_managed_fields) options.transform = dropManagedFields;
  Informer informer(client, resources::statefulSets(), options, clock);
  std::atomic<std::int64_t> updates{0};
  informer.addEventHandlers({.on_add = nullptr,
                             .on_update = [&](const ObjectPtr&, const ObjectPtr&) { ++updates; },
                             .on_delete = nullptr});
  informer.start();
  informer.waitForSync(std::chrono::seconds(10));
  client.feed(&streams[0]);  // warm-up: creates the kShards objects

  std::size_t round = 1;
  for (auto _ : state) {
    client.feed(&streams[round++ % streams.size()]);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetBytesProcessed(state.iterations() * kBatch * static_cast<std::int64_t>(event_bytes));
  state.counters["event_bytes"] = static_cast<double>(event_bytes);
  state.counters["store_size"] = static_cast<double>(informer.store().size());
  informer.stop();
  (void)updates.load();
}
BENCHMARK(informerDecodeAndApply)
    ->ArgName("drop_managed_fields")
    ->Arg(0)
    ->Arg(1)
    // CPU of every thread (feeder and informer): events per CPU-second is events/s on one core.
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// The parts alone, to see where the time goes.
void decodeOnly(benchmark::State& state) {
  auto stream = watchStreamBytes(100);
  for (auto _ : state) {
    WatchStreamDecoder decoder;
    std::int64_t events = 0;
    auto sink = [&](WatchEvent&& event) {
      benchmark::DoNotOptimize(event.object);
      ++events;
      return true;
    };
    for (std::size_t at = 0; at < stream.size(); at += kChunk) {
      (void)decoder.feed(std::string_view(stream).substr(at, kChunk), sink);
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(decodeOnly)->Unit(benchmark::kMillisecond);

// Old decoder vs new, on the bytes each informer receives: whole StatefulSets (what the old
// informer asked for; also what a server that cannot send PartialObjectMetadata sends) and
// PartialObjectMetadata (what the StatefulSet informer asks for now). The new decoder keeps
// what shardscaler's StatefulSet cache keeps (scaler/controller/src/shard_set_controller.cc).
std::shared_ptr<const FieldMask> cacheFields() {
  auto mask = FieldMask::keepNone();
  for (const char* f :
       {"namespace", "name", "resourceVersion", "generation", "deletionTimestamp"}) {
    mask.keep({"metadata", f});
  }
  for (const char* label : {"operator.prometheus.io/name", "operator.prometheus.io/mode",
                            "shardscaler.io/shardset", "shardscaler.io/retained"}) {
    mask.keep({"metadata", "labels", label});
  }
  for (const char* annotation :
       {"operator.prometheus.io/deletion-timestamp", "shardscaler.io/detached-at"}) {
    mask.keep({"metadata", "annotations", annotation});
  }
  return std::make_shared<const FieldMask>(std::move(mask));
}

Json partialObjectMetadata(const Json& object) {
  return Json{{"kind", "PartialObjectMetadata"},
              {"apiVersion", "meta.k8s.io/v1"},
              {"metadata", object["metadata"]}};
}

// MODIFIED events of kBatch objects; metadata only when `partial`.
std::string eventStream(bool partial, std::size_t* bytes) {
  std::string stream;
  for (int i = 0; i < kBatch; ++i) {
    Json object = bench::prometheusStatefulSet(i % kShards, 100 + i);
    Json event{{"type", "MODIFIED"},
               {"object", partial ? partialObjectMetadata(object) : std::move(object)}};
    stream += event.dump();
    stream += '\n';
  }
  *bytes = stream.size();
  return stream;
}

// range(0): 1 = PartialObjectMetadata events, 0 = whole objects; range(1): 1 = new decoder.
void watchDecode(benchmark::State& state) {
  const bool partial = state.range(0) != 0;
  const bool masked = state.range(1) != 0;
  std::size_t bytes = 0;
  const std::string stream = eventStream(partial, &bytes);
  const auto fields = masked ? cacheFields() : nullptr;
  for (auto _ : state) {
    WatchStreamDecoder decoder(fields);
    auto sink = [&](WatchEvent&& event) {
      benchmark::DoNotOptimize(event.object);
      return true;
    };
    for (std::size_t at = 0; at < stream.size(); at += kChunk) {
      (void)decoder.feed(std::string_view(stream).substr(at, kChunk), sink);
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["event_bytes"] = static_cast<double>(bytes) / kBatch;
}
BENCHMARK(watchDecode)
    ->ArgNames({"partial", "new"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

// One list page of 500 StatefulSets: Json::parse of the whole page (old) against
// parseProjected with the cache's fields under "items" (new).
void listDecode(benchmark::State& state) {
  const bool partial = state.range(0) != 0;
  const bool masked = state.range(1) != 0;
  Json items = Json::array();
  for (int i = 0; i < 500; ++i) {
    Json object = bench::prometheusStatefulSet(i % kShards, 100 + i);
    items.push_back(partial ? partialObjectMetadata(object) : std::move(object));
  }
  const std::string page =
      Json{{"kind", "List"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", std::move(items)}}
          .dump();
  const FieldMask list_fields = FieldMask::keepAll().put({"items"}, *cacheFields());
  for (auto _ : state) {
    if (masked) {
      auto parsed = parseProjected(page, list_fields);
      benchmark::DoNotOptimize(parsed);
    } else {
      auto parsed = Json::parse(page);
      benchmark::DoNotOptimize(parsed);
    }
  }
  state.SetItemsProcessed(state.iterations() * 500);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(page.size()));
}
BENCHMARK(listDecode)
    ->ArgNames({"partial", "new"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

// Heap held by 10,000 cached StatefulSets (glibc's mallinfo2, in use): the old cache (whole
// metadata without managedFields, from whole objects) against the new one (the cache's fields).
void cacheHeapPerObject(benchmark::State& state) {
  const bool masked = state.range(0) != 0;
  const auto fields = cacheFields();
  std::vector<std::string> texts;
  for (int i = 0; i < 10000; ++i) {
    Json object = bench::prometheusStatefulSet(i % kShards, 100 + i);
    object["metadata"]["name"] = "sts-" + std::to_string(i);
    texts.push_back(object.dump());
  }
  double per_object = 0;
  for (auto _ : state) {
    const auto before = mallinfo2().uordblks;
    std::vector<ObjectPtr> cache;
    cache.reserve(texts.size());
    for (const auto& text : texts) {
      Json object;
      if (masked) {
        object = *parseProjected(text, *fields);
      } else {
        object = Json::parse(text);
        Json kept{{"metadata", std::move(object["metadata"])}};  // the old keepMetadataOnly
        dropManagedFields(kept);
        object = std::move(kept);
      }
      cache.push_back(std::make_shared<const Json>(std::move(object)));
    }
    per_object = static_cast<double>(mallinfo2().uordblks - before) / texts.size();
    benchmark::DoNotOptimize(cache);
  }
  state.counters["heap_bytes_per_object"] = per_object;
}
BENCHMARK(cacheHeapPerObject)
    ->ArgName("new")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

void storeUpsertOnly(benchmark::State& state) {
  std::vector<ObjectPtr> objects;
  objects.reserve(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    objects.push_back(std::make_shared<const Json>(bench::prometheusStatefulSet(i % kShards, i)));
  }
  Store store;
  for (auto _ : state) {
    for (const auto& object : objects) benchmark::DoNotOptimize(store.upsert(object));
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(storeUpsertOnly)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace shardscaler::k8s

BENCHMARK_MAIN();
