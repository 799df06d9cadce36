// The one bounded wait of the tests: polls a condition until it holds or a timeout passes.
// Never waits longer than the timeout plus one poll, and never sleeps a guessed time to pass.
#pragma once

#include <chrono>
#include <concepts>
#include <functional>
#include <string>
#include <thread>
#include <utility>

namespace shardscaler::test_kit {

// Short enough not to slow a test down, long enough not to spin a core the other tests need.
inline constexpr std::chrono::milliseconds kDefaultPoll{10};

// Calls pred() until it returns true (true) or `timeout` passes (false). pred() is called at
// least once and once more after the deadline, so a condition that holds at the end counts.
template <typename Pred>
requires std::invocable<Pred&> && std::convertible_to < std::invoke_result_t<Pred&>,
bool > bool eventually(std::chrono::milliseconds timeout, Pred&& pred,
                       std::chrono::milliseconds poll = kDefaultPoll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(poll);
  }
  return static_cast<bool>(pred());
}

// The same for a check that says what it saw: check(&state) may describe the state it found,
// and the description of the last try is kept in *last_state for the failure message.
template <typename Check>
requires std::invocable<Check&, std::string*>
bool eventually(std::chrono::milliseconds timeout, Check&& check, std::string* last_state = nullptr,
                std::chrono::milliseconds poll = kDefaultPoll) {
  std::string state;
  const bool held = eventually(
      timeout,
      [&] {
        state.clear();
        return static_cast<bool>(check(&state));
      },
      poll);
  if (!held && last_state != nullptr) *last_state = std::move(state);
  return held;
}

}  // namespace shardscaler::test_kit
