// The bytes of request bodies one HTTPS server holds at once, from the header that announces a
// body until its answer is handed back: a bound on memory that a number of connections times a
// per-request limit is not. Thread-safe; a reservation is given back when it is destroyed.
#pragma once

#include <atomic>
#include <cstddef>
#include <utility>

namespace shardscaler::serving::detail {

class BodyBudget {
 public:
  explicit BodyBudget(std::size_t total_bytes) : total_(total_bytes) {}

  class Reservation {
   public:
    Reservation() = default;
    Reservation(BodyBudget* budget, std::size_t bytes) : budget_(budget), bytes_(bytes) {}
    Reservation(Reservation&& other) noexcept
        : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    Reservation& operator=(Reservation&& other) noexcept {
      if (this != &other) {
        release();
        budget_ = std::exchange(other.budget_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
      }
      return *this;
    }
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() { release(); }

    void release() {
      if (budget_ != nullptr) budget_->in_use_.fetch_sub(bytes_);
      budget_ = nullptr;
      bytes_ = 0;
    }

   private:
    BodyBudget* budget_ = nullptr;
    std::size_t bytes_ = 0;
  };

  // A reservation of `bytes`, or nothing when that would pass the total. A body of 0 bytes always
  // gets one.
  bool reserve(std::size_t bytes, Reservation* out) {
    std::size_t used = in_use_.load();
    do {
      if (bytes > total_ || used > total_ - bytes) return false;
    } while (!in_use_.compare_exchange_weak(used, used + bytes));
    *out = Reservation(this, bytes);
    return true;
  }

  std::size_t inUse() const { return in_use_.load(); }
  std::size_t total() const { return total_; }

 private:
  const std::size_t total_;
  std::atomic<std::size_t> in_use_{0};
};

}  // namespace shardscaler::serving::detail
