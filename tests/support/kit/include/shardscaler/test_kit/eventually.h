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

// Calls pred() every `poll` until it returns true (true) or `timeout` passes (false). pred() is
// called at least once and once more after the deadline, so a condition that holds at the end
// counts. Pass a longer poll when each try is costly (a request to a server, a kubectl run).
template <typename Pred>
requires std::invocable<Pred&> && std::convertible_to < std::invoke_result_t<Pred&>,
bool > bool eventually(std::chrono::milliseconds timeout, std::chrono::milliseconds poll,
                       Pred&& pred) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(poll);
  }
  return static_cast<bool>(pred());
}

template <typename Pred>
requires std::invocable<Pred&> && std::convertible_to < std::invoke_result_t<Pred&>,
bool > bool eventually(std::chrono::milliseconds timeout, Pred&& pred) {
  return eventually(timeout, kDefaultPoll, std::forward<Pred>(pred));
}

// The same for a check that says what it saw: check(&state) may describe the state it found,
// and the description of the last try is kept in *last_state for the failure message.
template <typename Check>
requires std::invocable<Check&, std::string*>
bool eventually(std::chrono::milliseconds timeout, std::chrono::milliseconds poll, Check&& check,
                std::string* last_state = nullptr) {
  std::string state;
  const bool held = eventually(timeout, poll, [&] {
    state.clear();
    return static_cast<bool>(check(&state));
  });
  if (!held && last_state != nullptr) *last_state = std::move(state);
  return held;
}

template <typename Check>
requires std::invocable<Check&, std::string*>
bool eventually(std::chrono::milliseconds timeout, Check&& check,
                std::string* last_state = nullptr) {
  return eventually(timeout, kDefaultPoll, std::forward<Check>(check), last_state);
}

}  // namespace shardscaler::test_kit
