// A fixed set of threads that run short blocking tasks (requests a reconcile sends beside its
// own) and hand their results back as futures, so that concurrent reads and writes reuse these
// threads instead of starting one per request. A task must never wait on another task of the
// same pool: with every thread waiting, the pool would stop.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <type_traits>
#include <utility>

namespace shardscaler::k8s {

class TaskPool {
 public:
  explicit TaskPool(std::size_t threads);
  // Runs what was submitted, then joins the threads.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Runs fn() on a thread of the pool; its result (or exception) comes through the future.
  template <typename F>
  std::future<std::invoke_result_t<F>> submit(F&& fn) {
    auto task =
        std::make_shared<std::packaged_task<std::invoke_result_t<F>()>>(std::forward<F>(fn));
    auto result = task->get_future();
    post([task] { (*task)(); });
    return result;
  }

 private:
  void post(std::function<void()> task);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardscaler::k8s
