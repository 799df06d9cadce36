#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/task_pool.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

TEST(TaskPool, ResultsAndExceptionsComeThroughTheFutures) {
  TaskPool pool(2);
  auto sum = pool.submit([] { return 40 + 2; });
  auto text = pool.submit([] { return std::string("list"); });
  auto failing = pool.submit([]() -> int { throw std::runtime_error("refused"); });
  EXPECT_EQ(sum.get(), 42);
  EXPECT_EQ(text.get(), "list");
  EXPECT_THROW(failing.get(), std::runtime_error);
}

// As many tasks run at once as the pool has threads, on threads of its own (the caller's thread
// is free to send its own request meanwhile), and the same threads serve the next tasks.
TEST(TaskPool, RunsUpToItsThreadsAtOnceAndReusesThem) {
  constexpr int kThreads = 3;
  TaskPool pool(kThreads);
  std::mutex mutex;
  std::condition_variable all_in;
  int running = 0;
  std::set<std::thread::id> threads;
  auto task = [&] {
    std::unique_lock lock(mutex);
    threads.insert(std::this_thread::get_id());
    ++running;
    all_in.notify_all();
    // Held until every thread of the pool runs one: fails (times out) if they ran one by one.
    return all_in.wait_for(lock, 10s, [&] { return running >= kThreads; });
  };
  for (int round = 0; round < 3; ++round) {
    {
      std::lock_guard lock(mutex);
      running = 0;
    }
    std::vector<std::future<bool>> results;
    results.reserve(kThreads);
    for (int i = 0; i < kThreads; ++i) results.push_back(pool.submit(task));
    for (auto& r : results) EXPECT_TRUE(r.get()) << "round " << round;
  }
  EXPECT_EQ(threads.size(), static_cast<std::size_t>(kThreads));
  EXPECT_FALSE(threads.contains(std::this_thread::get_id()));
}

TEST(TaskPool, TheDestructorRunsWhatWasSubmittedFirst) {
  std::atomic<int> ran{0};
  {
    TaskPool pool(1);
    for (int i = 0; i < 5; ++i) {
      (void)pool.submit([&] {
        std::this_thread::sleep_for(5ms);
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 5);
}

}  // namespace
}  // namespace shardscaler::k8s
