#include "shardscaler/k8s_client/task_pool.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

namespace shardscaler::k8s {

struct TaskPool::Impl {
  explicit Impl(std::size_t threads) : pool(std::max<std::size_t>(threads, 1)) {}
  boost::asio::thread_pool pool;
};

TaskPool::TaskPool(std::size_t threads) : impl_(std::make_unique<Impl>(threads)) {}

TaskPool::~TaskPool() { impl_->pool.join(); }

void TaskPool::post(std::function<void()> task) { boost::asio::post(impl_->pool, std::move(task)); }

}  // namespace shardscaler::k8s
