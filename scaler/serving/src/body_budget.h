// The bytes of request bodies one HTTPS server holds at once, from the header that announces a
// body until its answer is handed back: a bound on memory that a number of connections times a
// per-request limit is not. Thread-safe; a reservation is given back when it is destroyed.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace shardscaler::serving::detail {

class BodyBudget {
 public:
  explicit BodyBudget(std::size_t total_bytes) : total_(total_bytes) {}

  struct GiveBack {
    std::size_t bytes = 0;
    void operator()(BodyBudget* budget) const { budget->in_use_.fetch_sub(bytes); }
  };
  // Gives its bytes back when destroyed or reset(); release() would keep them reserved for good.
  using Reservation = std::unique_ptr<BodyBudget, GiveBack>;

  // A reservation of `bytes`, or an empty one when that would pass the total. A body of 0 bytes
  // always gets one.
  Reservation reserve(std::size_t bytes) {
    std::size_t used = in_use_.load();
    do {
      if (bytes > total_ || used > total_ - bytes) return nullptr;
    } while (!in_use_.compare_exchange_weak(used, used + bytes));
    return Reservation(this, GiveBack{bytes});
  }

  std::size_t total() const { return total_; }

 private:
  const std::size_t total_;
  std::atomic<std::size_t> in_use_{0};
};

}  // namespace shardscaler::serving::detail
