// SIGTERM/SIGINT become a stop request that waiters see; a second signal is not tested here
// because it ends the process by design.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "shardscaler/app/signals.h"

namespace shardscaler::app {
namespace {

using namespace std::chrono_literals;

TEST(SignalsStopTest, SigtermWakesWaitersAndTheStopToken) {
  std::atomic<int> seen{-1};
  StopSignal stop({.exit_on_second_signal = false, .on_stop = [&](int s) { seen = s; }});
  EXPECT_FALSE(stop.stopRequested());
  EXPECT_FALSE(stop.waitFor(1ms));
  std::atomic<bool> callback_ran{false};
  std::stop_callback on_token(stop.token(), [&] { callback_ran = true; });

  std::thread waiter([&] { stop.wait(); });
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  ASSERT_TRUE(stop.waitFor(5s));
  waiter.join();
  EXPECT_TRUE(stop.stopRequested());
  EXPECT_EQ(stop.signalNumber(), SIGTERM);
  EXPECT_EQ(seen.load(), SIGTERM);
  EXPECT_TRUE(callback_ran.load());
  EXPECT_TRUE(stop.token().stop_requested());
}

TEST(SignalsStopTest, SigintToo) {
  StopSignal stop({.exit_on_second_signal = false, .on_stop = {}});
  ASSERT_EQ(::kill(::getpid(), SIGINT), 0);
  ASSERT_TRUE(stop.waitFor(5s));
  EXPECT_EQ(stop.signalNumber(), SIGINT);
}

TEST(SignalsStopTest, RequestStopWithoutASignal) {
  int calls = 0;
  StopSignal stop({.exit_on_second_signal = false, .on_stop = [&](int s) { calls += s == 0; }});
  stop.requestStop();
  stop.requestStop();
  EXPECT_TRUE(stop.stopRequested());
  EXPECT_EQ(stop.signalNumber(), 0);
  EXPECT_EQ(calls, 1);
}

TEST(SignalsStopTest, HandlersAreRemovedWithTheObject) {
  { StopSignal stop({.exit_on_second_signal = false, .on_stop = {}}); }
  struct sigaction current {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &current), 0);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
}

}  // namespace
}  // namespace shardscaler::app
